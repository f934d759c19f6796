# The gateway as a container image: dependencies installed in one stage, only what runs copied into the next.
# No Docker engine where the tests run: `npm run check-dockerfile` (in .ci/run) proves every COPY source below is in
# the build context .dockerignore leaves. Running it: docs/going-live.md (live) and docs/sandbox.md (sandbox).
# the Node the `node` package of package.json pins, on Debian 12 (glibc: the prebuilt binaries need it)
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm's postinstall: removes what this platform never loads (other CPUs' llama.cpp builds, Node's C headers)
COPY scripts/lean-install.ts ./scripts/
# Production dependencies only (no TypeScript, test servers or x402 1.x wallet stacks). `npm install`, not
# `npm ci`: the lockfile cannot list other platforms' optional binaries (see .ci/run). The `node` package is
# the Node 24 a clone runs on; this image brings its own, so it is dropped.
RUN npm install --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node node_modules/.bin/node \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# glibc: two malloc arenas, not 8 per core for libvips' and libuv's threads (RSS after 1,000 paid calls 487 -> 237 MB
# with the semi-space bound below; docs/performance.md, "Memory")
# Sandbox chains (when no live networks are configured) listen on every interface at 8545 + n, in the order of
# SANDBOX_NETWORKS (default: solana, solana-devnet, base, polygon, base-sepolia, polygon-amoy), and /healthz gives
# buyers their URLs at SANDBOX_PUBLIC_HOST: publish those ports (docs/sandbox.md). Unused in live mode.
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    HOST=0.0.0.0 \
    PORT=4021 \
    DATA_DIR=/data \
    SANDBOX_HOST=0.0.0.0 \
    SANDBOX_PORT_BASE=8545 \
    SANDBOX_PUBLIC_HOST=localhost
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# our modules stripped of their types once, here, so the service never loads Node's type stripper (as npm's prestart)
COPY scripts/strip-types.ts ./scripts/
RUN node --disable-warning=ExperimentalWarning scripts/strip-types.ts
# The ledger, media and sandbox keys live in /data, owned by the image's unprivileged `node` user.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 4021 8545-8550
# Ready means a paid call can be served: chains, ledger, media store and providers answer (GET /readyz).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# As `npm start` (a test holds the two alike): V8's young generation capped at 16 MB semi-spaces, whatever the host (8 MB
# cost 23% more CPU per unpaid 402), and its old generation let grow to 1.5x what survived the last full collection,
# not V8's own up-to-4x (under mixed paid load RSS holds ~260 MB, not ~390: docs/performance.md)
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--import", "./src/boot/use-stripped-sources.mjs", "src/main.ts"]
