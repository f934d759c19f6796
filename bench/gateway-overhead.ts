// node bench/gateway-overhead.ts: the gateway's own cost on a chat completion, in the form gateway benchmarks
// publish theirs (a mock OpenAI upstream answering at once; the latency the gateway adds at one request in flight,
// p50/p90/p99; requests per second, sustained within a latency budget and at most), plus the rows no other
// gateway has: the same call paid per call under x402 `exact` and `upto`, and under batch-settlement vouchers.
//
// Processes: the mock upstream (bench/mock-upstream.ts), the gateway with payment left out (bench/serve.ts with
// BENCH_PAYMENT_EXCLUDED=1: a paid route runs its work at once and answers as a settled payment does; its calls take
// the way paid calls take: gateway-child.ts's paymentExcludedIn) and the
// gateway with payment (bench/serve.ts: the real gate on its sandbox base chain), both serving the mock's model as
// `mock/chat` (bench/mock-chat-model.ts), and this process, the client (node:http keep-alive, bench/load.ts).
//
// 1. Added latency, one request in flight: POST /v1/chat/completions to the gateway, and the same request sent
//    straight to the mock (the upstream's model name in it), in random order each turn, BENCH_OVERHEAD_WARMUP turns
//    uncounted then BENCH_OVERHEAD_ITERATIONS counted; added pXX = gateway pXX - direct pXX. The same for the
//    spec's own route (POST /api/v1/ai/chat) and for a streamed completion's time to first token (until the first
//    word of the answer arrives).
// 2. Throughput: closed loop at each of BENCH_CONCURRENCY_STEPS connections for BENCH_SECONDS each (after a second
//    of warm-up), the gateway and the mock alone taking turns: requests/s, p99, and the gateway's server CPU per request. Sustained
//    within the budget = the most requests/s at a step whose p99 stays within BENCH_LATENCY_BUDGET_MS. And each
//    gateway's GC time per request over the steps (bench/gc-time.ts: steadier between processes than CPU).
// 3. Paid, one request in flight: BENCH_OVERHEAD_PAID_ITERATIONS calls per scheme, each paid by the official
//    client (@x402/fetch 2.x with @x402/evm's exact, upto or batch-settlement client scheme; its payload made
//    before the timer starts: signing is the client's cost), taking turns with a direct call; the latency from
//    sending the paid request to its last byte: verification, the call, settlement (on the sandbox chain for exact
//    and upto: one transaction each; vouchers are claimed later, in batches). A first call per scheme is not
//    counted (upto's Permit2 approval, the voucher channel's deposit).
// Beside each latency row, the gateway's server CPU per call (from /proc) over the counted calls. BENCH_BASELINE_DIR
// names another checkout (with node_modules; its bench/serve.ts must take BENCH_UPSTREAM_URL): its gateway, payment
// left out, joins the same turns and steps. Prints tables (docs/performance.md); BENCH_JSON=1 prints JSON instead.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Agent } from 'node:http';
import { paymentExcludedIn, startGatewayChild, startReportingChild, type GatewayChild } from './gateway-child.ts';
import { alternatingLoad, jsonRequest, newAgent, processCpuSeconds, stats, type LatencyStats, type LoadResult } from './load.ts';
import { officialPayer, sandboxRpcUrl, timedSend, type SchemeName, type Timed } from './official-payer.ts';
import { envNumber } from './env-number.ts';
import { gcMsPerThousand, readGc } from './gc-time.ts';
import { MOCK_CHAT_MODEL } from './mock-chat-model.ts';
import { CHAT_TEXT } from '../test/support/openai-upstream.ts';

const ITERATIONS = envNumber('BENCH_OVERHEAD_ITERATIONS', 2000);
const WARMUP = envNumber('BENCH_OVERHEAD_WARMUP', 1000);
const PAID_ITERATIONS = envNumber('BENCH_OVERHEAD_PAID_ITERATIONS', 100);
const STEP_SECONDS = envNumber('BENCH_SECONDS', 4);
const BUDGET_MS = envNumber('BENCH_LATENCY_BUDGET_MS', 10);
const STEPS = (process.env.BENCH_CONCURRENCY_STEPS ?? '1,2,4,8,16,32,64').split(',').map(Number);
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
const MOCK = fileURLToPath(new URL('./mock-upstream.ts', import.meta.url));
const NETWORK = { 'X-Network': 'base' };

const messages = [{ role: 'user', content: 'Tell me about the sea' }];
const OPENAI_CHAT = { path: '/v1/chat/completions', body: { model: MOCK_CHAT_MODEL.id, messages, max_tokens: 32 } };
const SPEC_CHAT = { path: '/api/v1/ai/chat', body: { model: MOCK_CHAT_MODEL.id, prompt: 'Tell me about the sea', max_tokens: 32 } };
/** what reaches the mock straight from the client: the OpenAI request with the upstream's model name */
const DIRECT_CHAT = { path: '/v1/chat/completions', body: { ...OPENAI_CHAT.body, model: MOCK_CHAT_MODEL.upstreamModel } };
const streamed = <T extends { path: string; body: object }>(call: T) => ({ ...call, body: { ...call.body, stream: true } });
/** a streamed answer's first token: the first word of the mock's answer, as it arrives in either's chunks */
const FIRST_TOKEN = CHAT_TEXT.split(' ')[0]!;

interface Side {
  latency: LatencyStats;
  /** the server's CPU per call over the measured calls (ms), where its pid is known */
  cpuMs: number | null;
}

interface Added {
  direct: Side;
  gateway: Side;
  /** the gateway of BENCH_BASELINE_DIR, measured alike in the same turns */
  baseline?: Side;
  count: number;
}

interface Target {
  /** one call; returns the figure measured (the whole call, or its first token) */
  call: () => Promise<number>;
  pid?: number;
}

/** One request in flight: per turn, each target once in random order; `warmup` turns uncounted. */
async function turns(count: number, warmup: number, direct: Target, gateway: Target, baseline?: Target): Promise<Added> {
  const targets = baseline ? [direct, gateway, baseline] : [direct, gateway];
  const samples = targets.map((): number[] => []);
  const cpu = targets.map(() => 0);
  for (let i = 0; i < warmup + count; i++) {
    const order = targets.map((_, index) => index);
    for (let j = order.length - 1; j > 0; j--) {
      const k = Math.floor(Math.random() * (j + 1));
      [order[j], order[k]] = [order[k]!, order[j]!];
    }
    for (const index of order) {
      const target = targets[index]!;
      const before = target.pid === undefined ? null : processCpuSeconds(target.pid);
      const figure = await target.call();
      if (i < warmup) continue;
      samples[index]!.push(figure);
      if (before !== null) cpu[index]! += processCpuSeconds(target.pid!)! - before;
    }
  }
  const side = (index: number): Side => ({ latency: stats(samples[index]!), cpuMs: targets[index]!.pid === undefined ? null : (cpu[index]! * 1000) / count });
  return { direct: side(0), gateway: side(1), ...(baseline ? { baseline: side(2) } : {}), count };
}

function expect200(what: string, reply: Timed): Timed {
  if (reply.status !== 200) throw new Error(`${what} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  return reply;
}

type Caller = ReturnType<typeof caller>;

/** A caller of `call` on `origin` over one kept-alive connection, timing the whole answer or its first token. */
function caller(origin: URL, call: { path: string; body: object }, what: string, marker?: string) {
  const agent = newAgent(1);
  const spec = jsonRequest(call.path, call.body, NETWORK);
  return {
    agent,
    whole: async () => expect200(what, await timedSend(agent, origin, spec, marker)).ms,
    firstToken: async () => {
      const reply = expect200(what, await timedSend(agent, origin, spec, marker));
      if (Number.isNaN(reply.markerMs)) throw new Error(`${what}: no "${marker}" in the answer: ${reply.body.slice(0, 300)}`);
      return reply.markerMs;
    },
  };
}

/** Closed loop at each step: the targets take turns within a step (alternatingLoad), so load from other jobs weighs on all. */
async function throughput(targets: { origin: URL; pid: number; call: { path: string; body: object } }[]): Promise<LoadResult[][]> {
  const steps: LoadResult[][] = targets.map(() => []);
  for (const connections of STEPS) {
    const options = targets.map(({ origin, pid, call }) => ({
      origin,
      spec: jsonRequest(call.path, call.body, NETWORK),
      connections,
      seconds: STEP_SECONDS,
      warmupSeconds: 1,
      expectStatus: 200,
      serverPid: pid,
    }));
    const results = await alternatingLoad(options, 2);
    for (const [i, result] of results.entries()) steps[i]!.push(result);
  }
  return steps;
}

/** The most requests/s at a step whose p99 stays within the budget (0 when none does). */
const withinBudget = (steps: LoadResult[]) => steps.filter((s) => s.p99 <= BUDGET_MS && s.unexpected === 0).reduce((best, s) => Math.max(best, s.rps), 0);
const maximum = (steps: LoadResult[]) => steps.filter((s) => s.unexpected === 0).reduce((best, s) => Math.max(best, s.rps), 0);
const cpuPerRequest = (step: LoadResult) => (step.serverCpuPct === null ? '-' : ((step.serverCpuPct / 100 / step.rps) * 1e6).toFixed(0));

const children: GatewayChild[] = [];
const agents: Agent[] = [];
try {
  const mock = await startReportingChild(MOCK); // the upstream, not the gateway: a plain node; same protocol: prints {"url","pid"}, stops when stdin closes
  children.push(mock);
  const upstream = { BENCH_UPSTREAM_URL: mock.url.origin };
  const [excluded, paid, baseline] = await Promise.all([
    startGatewayChild({ ...upstream, BENCH_PAYMENT_EXCLUDED: '1' }),
    startGatewayChild(upstream),
    BASELINE_DIR ? startGatewayChild({ ...upstream, BENCH_PAYMENT_EXCLUDED: '1' }, join(BASELINE_DIR, 'bench/serve.ts')) : undefined,
  ]);
  children.push(excluded, paid, ...(baseline ? [baseline] : []));
  const paymentExcluded = paymentExcludedIn();
  const baselineExcluded = paymentExcludedIn(BASELINE_DIR);
  const target = (caller: Caller, pid: number, figure: 'whole' | 'firstToken' = 'whole'): Target => ({ call: caller[figure], pid });

  // 1. added latency, payment left out
  const callers = (call: { path: string; body: object }, what: string, marker?: string) => ({
    gateway: caller(excluded.url, paymentExcluded(call), `the gateway (${call.path})`, marker),
    baseline: baseline ? caller(baseline.url, baselineExcluded(call), `the baseline gateway (${call.path})`, marker) : undefined,
    what,
  });
  const direct = caller(mock.url, DIRECT_CHAT, 'the mock', FIRST_TOKEN);
  const directStream = caller(mock.url, streamed(DIRECT_CHAT), 'the mock, streamed', FIRST_TOKEN);
  const openai = callers(OPENAI_CHAT, 'openai');
  const spec = callers(SPEC_CHAT, 'spec');
  const openaiStream = callers(streamed(OPENAI_CHAT), 'stream', FIRST_TOKEN);
  for (const c of [direct, directStream, openai.gateway, spec.gateway, openaiStream.gateway, openai.baseline, spec.baseline, openaiStream.baseline]) if (c) agents.push(c.agent);
  const measured = (pair: ReturnType<typeof callers>, against: Caller, figure: 'whole' | 'firstToken' = 'whole') =>
    turns(
      ITERATIONS,
      WARMUP,
      target(against, mock.pid, figure),
      target(pair.gateway, excluded.pid, figure),
      pair.baseline && baseline ? target(pair.baseline, baseline.pid, figure) : undefined,
    );
  const latency = {
    openai: await measured(openai, direct),
    spec: await measured(spec, direct),
    firstToken: await measured(openaiStream, directStream, 'firstToken'),
  };

  // 2. throughput, and the GC time each gateway spent on it
  const gcSides = [excluded, ...(baseline ? [baseline] : [])];
  const gcBefore = await Promise.all(gcSides.map((side) => readGc(side.url)));
  const [gatewaySteps, mockSteps, baselineSteps] = await throughput([
    { origin: excluded.url, pid: excluded.pid, call: paymentExcluded(OPENAI_CHAT) },
    { origin: mock.url, pid: mock.pid, call: DIRECT_CHAT },
    ...(baseline ? [{ origin: baseline.url, pid: baseline.pid, call: baselineExcluded(OPENAI_CHAT) }] : []),
  ]);
  const [gatewayGc, baselineGc] = await Promise.all(gcSides.map(async (side, i) => gcMsPerThousand(gcBefore[i]!, await readGc(side.url))));

  // 3. paid
  const rpcUrl = await sandboxRpcUrl(paid.url);
  const paidRows: [SchemeName, Added][] = [];
  for (const scheme of ['exact', 'upto', 'vouchers'] as const) {
    const payer = await officialPayer(paid.url, rpcUrl, scheme, OPENAI_CHAT);
    agents.push(payer.agent);
    paidRows.push([scheme, await turns(PAID_ITERATIONS, 1, target(direct, mock.pid), { call: payer.pay, pid: paid.pid })]);
  }

  const result = { latency, paid: Object.fromEntries(paidRows), throughput: { budgetMs: BUDGET_MS, gateway: gatewaySteps, mock: mockSteps, baseline: baselineSteps, gcMsPerThousand: { gateway: gatewayGc, baseline: baselineGc } } };
  if (process.env.BENCH_JSON === '1') {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const ms = (value: number) => value.toFixed(3);
    const cpu = (side: Side) => (side.cpuMs === null ? '-' : (side.cpuMs * 1000).toFixed(0));
    const added = (side: Side, direct: Side) =>
      `${ms(side.latency.p50 - direct.latency.p50)} | ${ms(side.latency.p90 - direct.latency.p90)} | ${ms(side.latency.p99 - direct.latency.p99)} | ${ms(side.latency.p50)} | ${cpu(side)}`;
    const rows = (name: string, measured: Added) => [
      `| ${name} | ${added(measured.gateway, measured.direct)} | ${ms(measured.direct.latency.p50)} | ${measured.count} |`,
      ...(measured.baseline ? [`| ${name}, baseline | ${added(measured.baseline, measured.direct)} | ${ms(measured.direct.latency.p50)} | ${measured.count} |`] : []),
    ];
    const lines = [
      `Added latency at 1 in flight (ms; gateway pXX - direct pXX, direct = the same request to the mock upstream; ${WARMUP} warm-up turns)` +
        (BASELINE_DIR ? `; baseline: the gateway of ${BASELINE_DIR}, in the same turns` : ''),
      '| call | added p50 | added p90 | added p99 | gateway p50 | server CPU us/call | direct p50 | calls |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...rows('chat, POST /v1/chat/completions, payment left out', latency.openai),
      ...rows('chat, POST /api/v1/ai/chat, payment left out', latency.spec),
      ...rows('streamed chat, time to first token, payment left out', latency.firstToken),
      ...paidRows.flatMap(([scheme, measured]) => rows(`chat paid per call: ${scheme === 'vouchers' ? 'batch-settlement vouchers' : `x402 ${scheme}`}`, measured)),
      '',
      `Throughput, closed loop, ${STEP_SECONDS} s per step in 2 alternating rounds, POST /v1/chat/completions (payment left out), and the mock alone:`,
      `| connections | gateway req/s | p50 / p99 ms | server CPU us/req |${baselineSteps ? ' baseline req/s | p50 / p99 ms | server CPU us/req |' : ''} mock alone req/s | p99 ms |`,
      `|---:|---:|---:|---:|${baselineSteps ? '---:|---:|---:|' : ''}---:|---:|`,
      ...gatewaySteps!.map((g, i) => {
        const m = mockSteps![i]!;
        const b = baselineSteps?.[i];
        const side = (step: LoadResult) => `${step.rps.toFixed(0)} | ${step.p50.toFixed(2)} / ${step.p99.toFixed(2)} | ${cpuPerRequest(step)}`;
        return `| ${g.connections} | ${side(g)} |${b ? ` ${side(b)} |` : ''} ${m.rps.toFixed(0)} | ${m.p99.toFixed(2)} |`;
      }),
      `Sustained within p99 <= ${BUDGET_MS} ms: gateway ${withinBudget(gatewaySteps!).toFixed(0)} req/s` +
        (baselineSteps ? `, baseline ${withinBudget(baselineSteps).toFixed(0)}` : '') +
        ` (mock alone ${withinBudget(mockSteps!).toFixed(0)}); maximum: gateway ${maximum(gatewaySteps!).toFixed(0)} req/s` +
        (baselineSteps ? `, baseline ${maximum(baselineSteps).toFixed(0)}` : '') +
        ` (mock alone ${maximum(mockSteps!).toFixed(0)}).`,
      `V8 garbage collection over the throughput steps (nodejs_gc_duration_seconds from /metrics): gateway ${gatewayGc!.toFixed(1)} ms per 1,000 requests` +
        (baselineGc === undefined ? '' : `, baseline ${baselineGc.toFixed(1)}`) +
        '.',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
} finally {
  for (const agent of agents) agent.destroy();
  await Promise.all(children.map((child) => child.stop()));
}
