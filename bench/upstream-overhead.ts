// Child process of the bench: what the gateway adds to a chat completion over calling the same OpenAI-compatible
// upstream directly. Prints one JSON line on stdout.
//
// One process holds the client, the gateway and the upstream (test/support/openai-upstream.ts, a local server
// speaking the OpenAI protocol), and calls run one at a time, so every millisecond of a call is work of this
// process (plus the loopback hops), not scheduling between processes. That process runs as `npm start` runs the
// service, with its node flags and environment (bench/as-started.ts). Each iteration makes, in random order:
//   direct  = POST <upstream>/v1/chat/completions with the very method, headers and body the gateway's AI SDK
//             provider sends (captured from its first call), response read and JSON-parsed;
//   gateway = POST /api/v1/ai/chat { model: "up/chat", prompt, max_tokens }, with an X-PAYMENT proof when paid, through the
//             real service parts, served as src/service.ts serves them (the paid lane, src/http/paid/paid-lane.ts,
//             in front of the app, src/http/app.ts: the answer frame, body reading, zod validation, pricing, the
//             request hash of a paid call, the provider registry and its AI SDK model, response shaping), response
//             read and JSON-parsed.
// Two runs, one per gate:
//   excluded  payment left out: the call carries no proof, and the gate runs the paid work at once and answers as a
//             settled payment does (PaymentExcludedGate below, as bench/serve.ts's BENCH_PAYMENT_EXCLUDED, which
//             gateway-overhead.ts uses); decoding a proof and hashing the request it pays for are payment, counted
//             in the paid run. Everything else is the real code. The first BENCH_OVERHEAD_WARMUP pairs
//             are not counted, so this is the gateway warm, as a running service is.
//   paid      the real PaymentGate over the sandbox base chain and a SQLite ledger, each call with its own proof
//             signed as x402-fetch signs; the payment (the gate's handle() minus the work it runs: decode, reserve,
//             on-chain verify, ledger, on-chain settle) is timestamped per call and subtracted from that call.
//             On-chain steps leave this process idle while anvil works, and on a shared VM a CPU that idled runs
//             the next milliseconds slower (see `idle`), so this counts that slowdown as gateway time.
// firstToken: the same gateway's streamed chat (`stream: true`) against the provider's streamed request sent directly,
//   timed to the first word of the upstream's answer as it reaches the client; the upstream holds the words after the
//   first until the client has it (as a model's next token comes later), so the first token's time is not also that
//   of handling the words after it in this one process. BENCH_OVERHEAD_STREAM_ITERATIONS (1000) turns.
// The client sends every timed call over a lean connection (bench/lean-connection.ts), its bytes serialised before
// the clock starts: node:http's client would leave ~16 KB of garbage a call in the heap this process's gateway
// shares, and the young generation's scavenges (~1 ms each) would fall on more of its calls.
// Per pair: added = (gateway - payment) - direct. It splits, per call, into (they sum to it; their p50s need not):
//   hop        = client time - the server's handling time (from the request's arrival at the listener to its
//                answer's last byte handed to the socket): the extra HTTP round trip (node:http, kernel, client);
//   server     = handling - payment - work: the lane or Hono, body reading, zod validation, pricing, request
//                hash, the 200 written;
//   AI SDK     = work - the provider's upstream fetch (timed to response headers): prompt conversion, the
//                openai-compatible model, response body read and checks, result shaping;
//   fetch diff = that upstream fetch - the direct call.
// idle: the direct call made right after this process slept IDLE_MS, and the same call again at once after it.
// BENCH_BASELINE_DIR=<another checkout of this repository>: that checkout's gateway, built from its own sources
// (app, gate, providers) in this process, joins the excluded run: each turn calls the upstream directly and both
// gateways, in random order, so the two are compared on the same seconds of this machine ("baseline" in the output).
//   settings (env): BENCH_OVERHEAD_ITERATIONS (2000), BENCH_OVERHEAD_WARMUP (1000), BENCH_OVERHEAD_PAID_ITERATIONS (300)
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config/load.ts';
import { PaymentGate, type GateDeps, type PaidCall, type PaymentOutcome } from '../src/payments/gate.ts';
import { runWork } from '../src/payments/outcome.ts';
import { SqliteLedger } from '../src/store/sqlite-ledger.ts';
import { FileMediaStore } from '../src/media/file-media-store.ts';
import { ACCEPTED_ENCODINGS, type NodeHttpClient } from '../src/lib/node-http-fetch.ts';
import { startSandbox } from '../src/sandbox/sandbox.ts';
import { CHAT_PATH, CHAT_TEXT, startOpenAIUpstream } from '../test/support/openai-upstream.ts';
import { jsonRequest, sendOnce, stats, type LatencyStats, type RequestSpec } from './load.ts';
import { LeanConnection, requestBytes, type LeanAnswer } from './lean-connection.ts';
import { paidHeaders, signProof, type PaymentRequired } from './sign.ts';
import { runAsStarted } from './as-started.ts';

// measured as `npm start` runs the service: its node flags and environment
await runAsStarted(import.meta.filename);

const iterations = Number(process.env.BENCH_OVERHEAD_ITERATIONS ?? 2000);
const warmup = Number(process.env.BENCH_OVERHEAD_WARMUP ?? 1000);
const paidIterations = Number(process.env.BENCH_OVERHEAD_PAID_ITERATIONS ?? 300);
const streamIterations = Number(process.env.BENCH_OVERHEAD_STREAM_ITERATIONS ?? 1000);
const streamWarmup = Math.min(warmup, 500);
const PAID_WARMUP = 50;
const IDLE_MS = 5;
const BODY = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32 };
const PATH = '/api/v1/ai/chat';
/** a streamed answer's first token: the first word of the upstream's text, as it arrives through either */
const FIRST_TOKEN = CHAT_TEXT.split(' ')[0]!;
const FIRST_TOKEN_BYTES = Buffer.from(FIRST_TOKEN);
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;

/** Per call: the app's handling time, and what the gate and the provider's fetch took of it. */
const last = { appMs: NaN, paymentMs: NaN, workMs: NaN, upstreamFetchMs: NaN };

/** Runs the paid work and times it; what the gate does around it is its payment time. */
function timedWork(call: PaidCall): PaidCall {
  return {
    ...call,
    work: async (payment) => {
      const started = performance.now();
      try {
        return await call.work(payment);
      } finally {
        last.workMs = performance.now() - started;
      }
    },
  };
}

/** The real gate; only timestamps the part of handle() that is not the work. */
class TimedGate extends PaymentGate {
  override async process(call: PaidCall): Promise<PaymentOutcome> {
    const started = performance.now();
    try {
      return await super.process(timedWork(call));
    } finally {
      last.paymentMs = performance.now() - started - last.workMs;
    }
  }
}

/**
 * Payment left out: a call without a proof runs its work at once and is answered as a settled payment is. A
 * subclass of the given checkout's PaymentGate, so a baseline's gateway runs its own gate code.
 */
function paymentExcludedGate(Gate: typeof PaymentGate, deps: GateDeps, payer: string): PaymentGate {
  return new (class extends Gate {
    override async process(call: PaidCall): Promise<PaymentOutcome> {
      if (call.refundOnly) return super.process(call);
      const result = await runWork(timedWork(call), { payer, charge: call.amount });
      last.paymentMs = 0;
      const receipt = { success: true, transaction: `0x${'ab'.repeat(32)}`, network: 'base' as const, payer, amount: call.amount };
      return { kind: 'delivered', status: 200, body: result.body, media: result.media, receipt, wires: [1] };
    }
  })(deps);
}

const upstream = await startOpenAIUpstream();

// A checkout's provider transport (its own lib/node-http-fetch.ts), timed to response headers; the first requests
// (whole and streamed) are captured so the direct calls send the same bytes.
type Captured = { url: string; method: string; headers: Record<string, string>; body: string };
let captured: Captured | undefined;
let capturedStream: Captured | undefined;
function timedTransport(transport: NodeHttpClient): NodeHttpClient {
  return {
    fetch: transport.fetch,
    async send(url, call) {
      const request = { url: url.href, method: call.method, headers: { 'accept-encoding': ACCEPTED_ENCODINGS, ...call.headers }, body: String(call.body) };
      if (request.body.includes('"stream":true')) capturedStream ??= request;
      else captured ??= request;
      const started = performance.now();
      try {
        return await transport.send(url, call);
      } finally {
        last.upstreamFetchMs = performance.now() - started;
      }
    },
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'x402-bench-upstream-'));
const config = loadConfig({}, {
  host: '127.0.0.1',
  port: 0,
  dataDir,
  logLevel: 'silent',
  sandbox: { enabled: true, networks: ['base'] },
  providers: { up: { type: 'openai-compatible', baseURL: upstream.baseURL } },
  models: [
    {
      id: 'up/chat',
      provider: 'up',
      upstreamModel: 'bench-chat',
      capability: 'chat',
      maxTokens: 256,
      defaultMaxTokens: 64,
      price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
    },
  ],
});
const log = pino({ level: 'silent' });
const sandbox = await startSandbox(['base'], config.settlementTimeoutMs);
const ledger = new SqliteLedger(join(dataDir, 'ledger.db'));
const media = new FileMediaStore(join(dataDir, 'media'));
const servers: Server[] = [];
/** one kept-alive lean connection per origin: the timed calls' client (lean-connection.ts) */
const connections = new Map<string, LeanConnection>();
/** each request's bytes, serialised once per origin */
const wireBytes = new WeakMap<RequestSpec, Map<string, Buffer>>();

/** A timed call over a lean connection (see the header), its bytes serialised once, before the clock starts. */
function leanCall(origin: URL, spec: RequestSpec, marker?: Buffer, seen?: () => void): () => Promise<LeanAnswer> {
  let connection = connections.get(origin.href);
  if (!connection) connections.set(origin.href, (connection = new LeanConnection(origin)));
  let byOrigin = wireBytes.get(spec);
  if (!byOrigin) wireBytes.set(spec, (byOrigin = new Map()));
  let bytes = byOrigin.get(origin.href);
  if (!bytes) byOrigin.set(origin.href, (bytes = requestBytes(origin, spec)));
  const [to, wire] = [connection, bytes];
  return () => to.send(wire, marker, seen);
}

/**
 * Serves a request listener on a loopback port, timing each request from its arrival to its answer's last byte
 * handed to the socket.
 */
function listen(listener: RequestListener): Promise<URL> {
  const timed: RequestListener = (request, response) => {
    const started = performance.now();
    response.once('finish', () => (last.appMs = performance.now() - started));
    listener(request, response);
  };
  const server = createServer(timed);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))));
}

/**
 * A checkout's app, its parts imported from that checkout's sources (`root`): the service's own, or a baseline's.
 * Served as src/service.ts serves it: behind the paid lane where the checkout has one. (A checkout from before it
 * has the quote lane, which would run a payment-left-out call's work and hand it to the app to run again: the app
 * alone is how its paid calls were served.)
 */
async function appParts(root: string) {
  const [app, operations, metrics, gate, edge, frame, catalog, registry, local, http] = await Promise.all(
    ['http/app.ts', 'http/paid/operations.ts', 'http/metrics.ts', 'payments/gate.ts', 'http/paid/payment-edge.ts', 'http/answer-frame.ts', 'providers/catalog.ts', 'providers/registry.ts', 'providers/local/index.ts', 'lib/node-http-fetch.ts'].map(
      (path) => import(pathToFileURL(join(root, 'src', path)).href),
    ),
  );
  const lanePath = join(root, 'src/http/paid/paid-lane.ts');
  const lane = existsSync(lanePath) ? ((await import(pathToFileURL(lanePath).href)) as typeof import('../src/http/paid/paid-lane.ts')) : undefined;
  const providers = await registry.ProviderRegistry.create(config, local.createLocalEngines(config), timedTransport((http as typeof import('../src/lib/node-http-fetch.ts')).createNodeHttpClient()));
  const catalogue = new catalog.ModelCatalog(config.models, config.defaults);
  return {
    listen(gateOf: (Gate: typeof PaymentGate) => PaymentGate): Promise<URL> {
      const paymentGate = gateOf(gate.PaymentGate);
      const httpMetrics = new metrics.HttpMetrics();
      const answerFrame = frame.answerFrame({ log, metrics: httpMetrics, cors: app.CORS });
      const deps = { config, log, operations: operations.PAID_OPERATIONS, gate: paymentGate, answers: new edge.HttpPaymentAnswers(paymentGate), frame: answerFrame, catalog: catalogue, providers, media, ledger, metrics: httpMetrics, health: () => ({}) };
      const appListener = getRequestListener((app.createApp(deps) as Hono).fetch);
      return listen(lane ? lane.withPaidLane(appListener, deps) : appListener);
    },
  };
}

type Series = Record<'direct' | 'gateway' | 'payment' | 'gatewayNoPayment' | 'added' | 'hop' | 'server' | 'aiSdk' | 'fetchDiff' | 'upstreamFetch', number[]>;

try {
  const chain = sandbox.chains.get('base')!;
  const rails = new Map([['base' as const, chain.rail]]);
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address);
  const gateDeps = { rails, ledger, media, log };
  const ours = await appParts(resolve(import.meta.dirname, '..'));
  const paidGateway = await ours.listen(() => new TimedGate(gateDeps));
  const excludedGateway = await ours.listen((Gate) => paymentExcludedGate(Gate, gateDeps, buyer.address));
  const baselineGateway = BASELINE_DIR ? await (await appParts(resolve(BASELINE_DIR))).listen((Gate) => paymentExcludedGate(Gate, gateDeps, buyer.address)) : undefined;

  const quote = await sendOnce(paidGateway, jsonRequest(PATH, BODY, { 'X-Network': 'base' }));
  if (quote.status !== 402) throw new Error(`quote answered ${quote.status}: ${quote.body.toString()}`);
  const required = JSON.parse(quote.body.toString()) as PaymentRequired;
  // A proof is valid for maxTimeoutSeconds after signing: paid calls take theirs from batches of 100, each
  // batch signed when the last is used up (a few seconds before its proofs are sent).
  const signed: RequestSpec[] = [];
  const paidCall = async (): Promise<RequestSpec> => {
    if (signed.length === 0) {
      for (let i = 0; i < 100; i++) signed.push(jsonRequest(PATH, BODY, { 'X-Network': 'base', ...paidHeaders(await signProof(buyer, required)) }));
    }
    return signed.pop()!;
  };
  const excludedCall = jsonRequest(PATH, BODY, { 'X-Network': 'base' });

  const callGateway = async (origin: URL, spec: RequestSpec) => {
    const call = leanCall(origin, spec);
    const started = performance.now();
    const reply = await call();
    const body = JSON.parse(reply.body.toString()) as { response?: string };
    const ms = performance.now() - started;
    if (reply.status !== 200 || !body.response) throw new Error(`paid chat answered ${reply.status}: ${reply.body.toString().slice(0, 300)}`);
    return { ms, ...last };
  };
  await callGateway(excludedGateway, excludedCall); // captures the provider's request
  if (!captured) throw new Error('the provider made no upstream call');
  const upstreamUrl = new URL(captured.url);
  /** the provider's request as the direct call sends it */
  const directOf = ({ method, headers: { 'content-length': _length, ...headers }, body }: Captured): RequestSpec => ({ ...jsonRequest(upstreamUrl.pathname, JSON.parse(body), headers), method });
  const direct = directOf(captured);
  const callDirect = async () => {
    const call = leanCall(upstreamUrl, direct);
    const started = performance.now();
    const reply = await call();
    const body = JSON.parse(reply.body.toString()) as { choices?: unknown[] };
    const ms = performance.now() - started;
    if (reply.status !== 200 || !body.choices) throw new Error(`direct upstream call answered ${reply.status}: ${reply.body.toString().slice(0, 300)}`);
    return ms;
  };

  /**
   * `count` measured turns after `skip` uncounted ones; a turn is the direct call and one call to each gateway, in
   * random order. Per gateway, its series against the same turns' direct calls.
   */
  const measure = async (origins: URL[], nextCall: () => RequestSpec | Promise<RequestSpec>, skip: number, count: number) => {
    const all = origins.map((): Series => ({
      direct: [], gateway: [], payment: [], gatewayNoPayment: [], added: [], hop: [], server: [], aiSdk: [], fetchDiff: [], upstreamFetch: [],
    }));
    for (let i = 0; i < skip + count; i++) {
      const spec = await nextCall();
      const turn = [-1, ...origins.keys()].sort(() => Math.random() - 0.5);
      let d = NaN;
      const calls: Awaited<ReturnType<typeof callGateway>>[] = [];
      for (const k of turn) {
        if (k < 0) d = await callDirect();
        else calls[k] = await callGateway(origins[k]!, spec);
      }
      if (i < skip) continue;
      calls.forEach((g, k) => {
        const series = all[k]!;
        const withoutPayment = g.ms - g.paymentMs;
        series.direct.push(d);
        series.gateway.push(g.ms);
        series.payment.push(g.paymentMs);
        series.gatewayNoPayment.push(withoutPayment);
        series.added.push(withoutPayment - d);
        series.hop.push(g.ms - g.appMs);
        series.server.push(g.appMs - g.paymentMs - g.workMs);
        series.aiSdk.push(g.workMs - g.upstreamFetchMs);
        series.fetchDiff.push(g.upstreamFetchMs - d);
        series.upstreamFetch.push(g.upstreamFetchMs);
      });
    }
    return all.map((series) => Object.fromEntries(Object.entries(series).map(([name, samples]) => [name, stats(samples)])) as Record<keyof Series, LatencyStats>);
  };

  const [excluded, baseline] = await measure([excludedGateway, ...(baselineGateway ? [baselineGateway] : [])], () => excludedCall, warmup, iterations);
  // Streamed: the time to the first token (the first word of the upstream's answer, as it arrives), the direct
  // streamed call and each gateway's, in random order each turn. The upstream holds the words after the first until
  // the client has it, as a model's next token comes later: the first token's time is not also that of the words
  // after it, which this one process would otherwise be handling before the client reads.
  const streamedCall = jsonRequest(PATH, { ...BODY, stream: true }, { 'X-Network': 'base' });
  const firstTokenOf = async (origin: URL, spec: RequestSpec, what: string) => {
    upstream.fail(CHAT_PATH, { kind: 'stream-hold', afterChunks: 2 }); // the role's event, then the first word's
    const call = leanCall(origin, spec, FIRST_TOKEN_BYTES, () => upstream.release());
    const started = performance.now();
    const reply = await call();
    if (reply.status !== 200 || reply.markerAt === undefined) throw new Error(`${what} answered ${reply.status} without "${FIRST_TOKEN}": ${reply.body.toString().slice(0, 300)}`);
    return reply.markerAt - started;
  };
  await firstTokenOf(excludedGateway, streamedCall, 'the streamed gateway call'); // captures the provider's streamed request
  if (!capturedStream) throw new Error('the provider made no streamed upstream call');
  const directStreamed = directOf(capturedStream);
  const streamOrigins = [excludedGateway, ...(baselineGateway ? [baselineGateway] : [])];
  const firstToken = streamOrigins.map(() => ({ direct: [] as number[], gateway: [] as number[], added: [] as number[] }));
  for (let i = 0; i < streamWarmup + streamIterations; i++) {
    let d = NaN;
    const g: number[] = [];
    for (const k of [-1, ...streamOrigins.keys()].sort(() => Math.random() - 0.5)) {
      if (k < 0) d = await firstTokenOf(upstreamUrl, directStreamed, 'the direct streamed call');
      else g[k] = await firstTokenOf(streamOrigins[k]!, streamedCall, 'the streamed gateway call');
    }
    if (i < streamWarmup) continue;
    g.forEach((ms, k) => {
      firstToken[k]!.direct.push(d);
      firstToken[k]!.gateway.push(ms);
      firstToken[k]!.added.push(ms - d);
    });
  }
  const [streamed, baselineStreamed] = firstToken.map((series) => ({ direct: stats(series.direct), gateway: stats(series.gateway), added: stats(series.added) }));
  const [paid] = await measure([paidGateway], paidCall, PAID_WARMUP, paidIterations);
  const backToBack: number[] = [];
  const afterIdle: number[] = [];
  for (let i = 0; i < paidIterations; i++) {
    await sleep(IDLE_MS);
    afterIdle.push(await callDirect());
    backToBack.push(await callDirect());
  }

  const result = {
    body: BODY,
    upstreamRequest: { method: captured.method, path: upstreamUrl.pathname, bytes: captured.body.length },
    warmup,
    excluded,
    firstToken: streamed,
    ...(baseline ? { baseline: { dir: BASELINE_DIR, excluded: baseline, firstToken: baselineStreamed } } : {}),
    paid,
    idle: { ms: IDLE_MS, backToBack: stats(backToBack), afterIdle: stats(afterIdle) },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  for (const connection of connections.values()) connection.close();
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await sandbox.stop();
  await ledger.close();
  await upstream.close();
  rmSync(dataDir, { recursive: true, force: true });
}
