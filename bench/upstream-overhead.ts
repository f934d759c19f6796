// Child process of the bench: what the gateway adds to a chat completion over calling the same
// OpenAI-compatible upstream directly, payment excluded. Prints one JSON line on stdout.
//
// One process holds the client, the gateway and the upstream (test/support/openai-upstream.ts, a local
// server speaking the OpenAI protocol), and calls run one at a time, so every millisecond of a call is
// work of this process (plus the loopback hops), not scheduling between processes on a shared machine.
// Each iteration makes, in random order:
//   direct  = POST <upstream>/v1/chat/completions with the very method, headers and body the gateway's
//             AI SDK provider sends (captured from its first call), response read and JSON-parsed;
//   gateway = POST /api/v1/ai/chat { model: "up/chat", prompt, max_tokens } with its own pre-signed
//             EIP-3009 proof, through the real service parts (src/http/app.ts: middleware, body reading,
//             zod validation, pricing, the real PaymentGate over the sandbox chain and a SQLite ledger,
//             the AI SDK provider, response shaping), response read and JSON-parsed.
// Payment is the time of the gate's handle() minus the work it runs (decode, match, reserve, on-chain
// verify, ledger transitions, on-chain settle, receipt), taken per call by a subclass of the gate that
// only timestamps, and subtracted from that same call: added = (gateway - payment) - direct, per pair.
// The added time splits, per call, into (they sum to it; their p50s need not):
//   hop        = client time - the app's handling time (app.fetch timed): the extra HTTP round trip
//                (node-server request/response objects, kernel, client);
//   server     = app handling - payment - work: middleware, body reading, zod validation, pricing, the
//                request hash of a paid call, the 200 body;
//   AI SDK     = work - the provider's upstream fetch (timed to response headers): generateText, the
//                openai-compatible provider, response body read and checks, result shaping;
//   fetch diff = that upstream fetch (undici, as the AI SDK makes it) - the direct call (node:http).
//   settings (env): BENCH_OVERHEAD_ITERATIONS (200), BENCH_OVERHEAD_WARMUP (20)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config/load.ts';
import { ENDPOINTS } from '../src/service.ts';
import { createApp } from '../src/http/app.ts';
import { HttpMetrics } from '../src/http/metrics.ts';
import { PaymentGate, type GateResponse, type PaidCall } from '../src/payments/gate.ts';
import { SqliteLedger } from '../src/store/sqlite-ledger.ts';
import { FileMediaStore } from '../src/media/file-media-store.ts';
import { ModelCatalog } from '../src/providers/catalog.ts';
import { ProviderRegistry } from '../src/providers/registry.ts';
import { createLocalEngines } from '../src/providers/local/index.ts';
import { startSandbox } from '../src/sandbox/sandbox.ts';
import { startOpenAIUpstream } from '../test/support/openai-upstream.ts';
import { jsonRequest, newAgent, send, stats, type RequestSpec } from './load.ts';
import { paidHeaders, signProof, type PaymentRequired } from './sign.ts';

const iterations = Number(process.env.BENCH_OVERHEAD_ITERATIONS ?? 200);
const warmup = Number(process.env.BENCH_OVERHEAD_WARMUP ?? 20);
const BODY = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32 };
const PATH = '/api/v1/ai/chat';

/** The real gate; only timestamps the part of handle() that is not the work. */
class TimedGate extends PaymentGate {
  last = { paymentMs: NaN, workMs: NaN };
  override async handle(call: PaidCall): Promise<GateResponse> {
    let workMs = 0;
    const started = performance.now();
    const work = async () => {
      const workStarted = performance.now();
      try {
        return await call.work();
      } finally {
        workMs = performance.now() - workStarted;
      }
    };
    try {
      return await super.handle({ ...call, work });
    } finally {
      this.last = { paymentMs: performance.now() - started - workMs, workMs };
    }
  }
}

const upstream = await startOpenAIUpstream();

// The provider's fetch (limitedFetch over globalThis.fetch, taken when the registry is built): its calls to
// the upstream are timed, and the first one captured so the direct call sends the same bytes. (viem's RPC
// calls to the sandbox chain go through globalThis.fetch too, and pass untouched.)
const realFetch = globalThis.fetch;
let upstreamFetchMs = NaN;
let captured: { url: string; method: string; headers: Record<string, string>; body: string } | undefined;
globalThis.fetch = async (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  if (!url.startsWith(upstream.baseURL)) return realFetch(input, init);
  if (!captured) captured = { url, method: init?.method ?? 'GET', headers: Object.fromEntries(new Headers(init?.headers)), body: String(init?.body) };
  const started = performance.now();
  try {
    return await realFetch(input, init);
  } finally {
    upstreamFetchMs = performance.now() - started;
  }
};

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
let server: ServerType | undefined;
let appMs = NaN;
const agent = newAgent(1);

try {
  const chain = sandbox.chains.get('base')!;
  const gate = new TimedGate({ rails: new Map([['base', chain.rail]]), ledger, media, log });
  const app = createApp({
    config,
    log,
    endpoints: ENDPOINTS,
    gate,
    catalog: new ModelCatalog(config.models, config.defaults),
    providers: new ProviderRegistry(config, createLocalEngines(config)),
    media,
    ledger,
    metrics: new HttpMetrics(),
    health: () => ({}),
  });
  const gateway = await new Promise<URL>((resolve) => {
    const handle = async (request: Request, env: unknown) => {
      const started = performance.now();
      try {
        return await app.fetch(request, env as never);
      } finally {
        appMs = performance.now() - started;
      }
    };
    server = serve({ fetch: handle, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => resolve(new URL(`http://127.0.0.1:${info.port}`)));
  });

  // One funded buyer and one pre-signed proof per paid call (signing is the client's cost, not the gateway's).
  const quote = await send(agent, gateway, jsonRequest(PATH, BODY, { 'X-Network': 'base' }));
  if (quote.status !== 402) throw new Error(`quote answered ${quote.status}: ${quote.body.toString()}`);
  const required = JSON.parse(quote.body.toString()) as PaymentRequired;
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address);
  const total = 1 + warmup + iterations; // the first call also captures the provider's request
  const paid: RequestSpec[] = [];
  for (let i = 0; i < total; i++) paid.push(jsonRequest(PATH, BODY, { 'X-Network': 'base', ...paidHeaders(await signProof(buyer, required)) }));

  const callGateway = async (spec: RequestSpec) => {
    const started = performance.now();
    const reply = await send(agent, gateway, spec);
    const body = JSON.parse(reply.body.toString()) as { response?: string };
    const ms = performance.now() - started;
    if (reply.status !== 200 || !body.response) throw new Error(`paid chat answered ${reply.status}: ${reply.body.toString().slice(0, 300)}`);
    return { ms, appMs, ...gate.last, upstreamFetchMs };
  };
  await callGateway(paid[0]!); // captures the provider's request
  if (!captured) throw new Error('the provider made no upstream call');
  const upstreamUrl = new URL(captured.url);
  const { 'content-length': _length, ...headers } = captured.headers;
  const direct: RequestSpec = { ...jsonRequest(upstreamUrl.pathname, JSON.parse(captured.body), headers), method: captured.method };
  const upstreamAgent = newAgent(1);
  const callDirect = async () => {
    const started = performance.now();
    const reply = await send(upstreamAgent, upstreamUrl, direct);
    const body = JSON.parse(reply.body.toString()) as { choices?: unknown[] };
    const ms = performance.now() - started;
    if (reply.status !== 200 || !body.choices) throw new Error(`direct upstream call answered ${reply.status}: ${reply.body.toString().slice(0, 300)}`);
    return ms;
  };

  const series: Record<string, number[]> = {
    direct: [], gateway: [], payment: [], gatewayNoPayment: [], added: [], hop: [], server: [], aiSdk: [], fetchDiff: [], upstreamFetch: [],
  };
  try {
    for (let i = 1; i < total; i++) {
      const directFirst = Math.random() < 0.5;
      const d1 = directFirst ? await callDirect() : undefined;
      const g = await callGateway(paid[i]!);
      const d = d1 ?? (await callDirect());
      if (i <= warmup) continue;
      const withoutPayment = g.ms - g.paymentMs;
      series.direct!.push(d);
      series.gateway!.push(g.ms);
      series.payment!.push(g.paymentMs);
      series.gatewayNoPayment!.push(withoutPayment);
      series.added!.push(withoutPayment - d);
      series.hop!.push(g.ms - g.appMs);
      series.server!.push(g.appMs - g.paymentMs - g.workMs);
      series.aiSdk!.push(g.workMs - g.upstreamFetchMs);
      series.fetchDiff!.push(g.upstreamFetchMs - d);
      series.upstreamFetch!.push(g.upstreamFetchMs);
    }
  } finally {
    upstreamAgent.destroy();
  }
  const result = {
    iterations: series.added!.length,
    body: BODY,
    upstreamRequest: { method: captured.method, path: upstreamUrl.pathname, bytes: captured.body.length },
    pieces: Object.fromEntries(Object.entries(series).map(([name, samples]) => [name, stats(samples)])),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  agent.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await sandbox.stop();
  await ledger.close();
  await upstream.close();
  globalThis.fetch = realFetch;
  rmSync(dataDir, { recursive: true, force: true });
}
