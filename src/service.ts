// Builds and runs the whole service from a config: storage, payment rails (sandbox or configured),
// providers, the gate, the HTTP app, the reconciler; and stops it all gracefully.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Logger } from 'pino';
import { createLogger } from './logging.ts';
import { InvalidConfigurationError, type Config } from './config/load.ts';
import { operatorTokenProblems } from './http/admin/admin-auth.ts';
import { openLedger } from './store/open-ledger.ts';
import { mediaStoreFromConfig } from './media/media-store-from-config.ts';
import { startMediaRetention } from './media/media-retention.ts';
import { startLedgerRetention } from './store/ledger-retention.ts';
import { startReservationHeartbeat } from './store/reservation-heartbeat.ts';
import { PaymentGate } from './payments/gate.ts';
import { Reconciler } from './payments/reconciler.ts';
import { ChannelClaimer } from './payments/channels/channel-claimer.ts';
import { ChannelMetrics } from './payments/channels/channel-metrics.ts';
import { PaymentReadiness } from './payments/readiness.ts';
import { configuredRails } from './payments/configured-rails.ts';
import type { PaymentRail } from './payments/rails.ts';
import { ModelCatalog } from './providers/catalog.ts';
import { ProviderRegistry } from './providers/registry.ts';
import { createLocalEngines } from './providers/local/index.ts';
import { CORS, createApp, type AppDeps } from './http/app.ts';
import { ERROR_SHAPES, PAID_OPERATIONS } from './http/paid/operations.ts';
import { HttpPaymentAnswers } from './http/paid/payment-edge.ts';
import { answerFrame } from './http/answer-frame.ts';
import { answerParserErrors, answerUnbuildableRequests, requireHost } from './http/parser-errors.ts';
import { errorShapeByPath } from './http/render-error.ts';
import { withPaidLane } from './http/paid/paid-lane.ts';
import { withBodyBudget } from './http/body-budget.ts';
import { HttpMetrics } from './http/metrics.ts';
import { startTracing } from './tracing/otlp-tracing.ts';
import { tracedPayments } from './tracing/traced-payments.ts';
import { BACKLOG_CAP, PaymentMetrics } from './payments/payment-metrics.ts';
import { checkReadiness } from './http/readiness-checks.ts';
import { startSandbox, type Sandbox } from './sandbox/sandbox.ts';
import { playgroundRoutes } from './playground/routes.ts';
import { Hono } from 'hono';
import { NETWORKS } from './x402/networks.ts';
import type { NetworkName } from './x402/networks.ts';
import type { Ledger } from './store/ledger.ts';
import type { MediaStore } from './media/media-store.ts';

export interface RunningService {
  url: string;
  config: Config;
  ledger: Ledger;
  media: MediaStore;
  sandbox: Sandbox | undefined;
  rails: ReadonlyMap<NetworkName, PaymentRail>;
  reconciler: Reconciler;
  /** claims and settles payment channels' charges (present where a rail offers channels) */
  claimer?: ChannelClaimer;
  log: Logger;
  /** stops accepting connections, lets in-flight requests finish, then releases everything */
  stop(): Promise<void>;
}

/** The faucet and the browser playground, which pays on the sandbox's EVM chains. */
function sandboxPages(sandbox: Sandbox): Hono {
  const evm = [...sandbox.chains.keys()].filter((name) => NETWORKS[name].family === 'evm');
  const playground = playgroundRoutes(evm.map((name) => ({ name, caip2: NETWORKS[name].caip2 })));
  return new Hono().route('/', sandbox.routes).route('/', playground);
}

export async function startService(config: Config, options: { log?: Logger } = {}): Promise<RunningService> {
  const log = options.log ?? createLogger(config.logLevel, 1, config.logFormat);
  mkdirSync(config.dataDir, { recursive: true });
  // rails first: a missing secret stops startup before the ledger is opened
  // (a shared ledger also coordinates settlement keys' nonces: the rails ask for it at their first send)
  let openedLedger: Ledger | undefined;
  // and the operator's tokens: every missing or malformed secret named in one message
  const tokenProblems = operatorTokenProblems(config);
  const rails = await configuredRails(config, process.env, () => openedLedger, log).catch((error: unknown) => {
    throw error instanceof InvalidConfigurationError && tokenProblems.length > 0 ? new InvalidConfigurationError([...error.problems, ...tokenProblems]) : error;
  });
  if (tokenProblems.length > 0) throw new InvalidConfigurationError(tokenProblems);
  const { ledger, engine } = await openLedger(config, log);
  openedLedger = ledger;
  log.info({ engine }, 'payments ledger ready');
  const heartbeat = startReservationHeartbeat(ledger, config.reservationLeaseMs, log);
  const { store: media, close: closeMedia } = await mediaStoreFromConfig(config);

  let sandbox: Sandbox | undefined;
  if (config.sandbox.enabled) {
    const { host, portBase, publicHost } = config.sandbox;
    sandbox = await startSandbox(config.sandbox.networks, config.settlementTimeoutMs, {
      settlementBatching: config.settlementBatching,
      listen: { host, portBase, publicHost },
      channelWithdrawDelay: config.channels.withdrawDelay,
      channelDepositMethod: config.channels.depositMethod,
      ...(config.sandbox.keepState ? { stateDir: join(config.dataDir, 'sandbox') } : {}),
    });
    for (const [name, chain] of sandbox.chains) if (!rails.has(name)) rails.set(name, chain.rail);
  }

  // not awaited: startup does not wait on remote RPCs; stop() does
  const payments = new PaymentReadiness(rails, log, { intervalMs: config.readinessCheckIntervalMs });
  const readiness = payments.start();

  const catalog = new ModelCatalog(config.models, config.defaults);
  const providers = await ProviderRegistry.create(config, createLocalEngines(config));
  const metrics = new HttpMetrics();
  const paymentMetrics = new PaymentMetrics(metrics.registry, async () => (await ledger.listPending(BACKLOG_CAP)).length);
  // OpenTelemetry loads only when tracing is configured; its observer then also tells each paid call's span
  const tracing = await startTracing(config, log);
  const observe = tracing ? tracedPayments(paymentMetrics) : paymentMetrics;
  const observeChannels = new ChannelMetrics(metrics.registry);
  const gate = new PaymentGate({
    rails,
    ledger,
    media,
    log,
    observe,
    observeChannels,
    maxFailedAttempts: config.maxFailedAttempts,
    offered: (network) => payments.ready(network),
  });
  const reconciler = new Reconciler(
    { ledger, rails, media, log, observe },
    { abandonedAfterMs: config.abandonedAfterMs, leaseMs: config.reconcileLeaseMs, settlingGraceMs: config.settlingGraceMs },
  );
  // payment channels' charges are claimed and settled in batches (payments/channels/channel-claimer.ts)
  const claimer =
    ledger.channels && [...rails.values()].some((rail) => rail.channels)
      ? new ChannelClaimer(
          { rails, store: ledger.channels, log, observe: observeChannels },
          {
            intervalMs: config.channels.claimIntervalMs,
            threshold: BigInt(config.channels.claimThreshold),
            maxAgeMs: config.channels.claimMaxAgeMs,
            maxClaimsPerBatch: config.channels.maxClaimsPerBatch,
          },
        )
      : undefined;
  const appDeps: AppDeps = {
    config,
    log,
    operations: PAID_OPERATIONS,
    gate,
    answers: new HttpPaymentAnswers(gate),
    frame: answerFrame({ log, metrics, cors: CORS }),
    catalog,
    providers,
    media,
    ledger,
    metrics,
    tracing,
    extraRoutes: sandbox && sandboxPages(sandbox),
    readiness: () =>
      checkReadiness(
        {
          config,
          ledger,
          media,
          rails,
          payments,
          sandboxRpcUrls: new Map([...(sandbox?.chains ?? [])].map(([name, chain]) => [name, chain.rpcUrl])),
        },
        [...rails.keys()],
      ),
    health: () => ({
      mode: sandbox ? 'sandbox' : 'live',
      networks: [...rails.values()].map((rail) => ({ network: rail.network.name, payTo: rail.payTo, asset: rail.asset })),
      ...sandbox?.health(),
    }),
  };
  const app = createApp(appDeps);

  // node:http with @hono/node-server's listener rather than its serve(), which cannot take an errorHandler
  // requireHostHeader off: Node's answer to an HTTP/1.1 request without Host is a bare 400; requireHost's is JSON
  const shapeFor = errorShapeByPath(ERROR_SHAPES);
  const server: Server = createServer(
    { requireHostHeader: false },
    requireHost(
      withBodyBudget(
        withPaidLane(getRequestListener(app.fetch, { hostname: config.host, errorHandler: answerUnbuildableRequests(log) }), appDeps),
        { limitBytes: config.bodyMemoryLimitBytes, largestBodyBytes: Math.max(config.bodyLimitBytes, config.chatBodyLimitBytes) },
        shapeFor,
      ),
      shapeFor,
    ),
  );
  answerParserErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  reconciler.start(config.reconcileIntervalMs);
  claimer?.start();
  const retention = startMediaRetention(media, config.mediaRetentionDays, log);
  const ledgerRetention = startLedgerRetention(ledger, config.ledgerRetentionDays, log);
  log.info({ url, mode: sandbox ? 'sandbox' : 'live', networks: [...rails.keys()] }, 'service listening');
  if (sandbox) {
    // last at startup and boxed on a terminal (`banner`): nobody mistakes test money for real money
    log.warn(
      {
        banner: 'sandbox',
        faucet: `POST ${url}/sandbox/faucet (or: npx x402-ai faucet)`,
        networks: Object.fromEntries([...sandbox.chains].map(([name, chain]) => [name, chain.publicRpcUrl])),
      },
      'SANDBOX MODE: payments use local test chains and test USDC; no real funds move. POST /sandbox/faucet funds any address.',
    );
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // idle keep-alive sockets would hold close() open; in-flight requests still finish
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      });
      await readiness;
      await payments.stop();
      await reconciler.stop();
      await claimer?.stop();
      await retention.stop();
      await ledgerRetention.stop();
      await heartbeat.stop();
      await tracing?.shutdown();
      await sandbox?.stop();
      await ledger.close();
      closeMedia();
    })());

  return { url, config, ledger, media, sandbox, rails, reconciler, ...(claimer ? { claimer } : {}), log, stop };
}
