// node bench/channels.ts: paid calls per second at 8 in flight under payment-channel vouchers (x402
// batch-settlement, paid by the official @x402/evm client) beside `exact` (one on-chain settlement per call,
// bench/paid-load.ts), same gateway child (bench/serve.ts: `npm start`'s service on a sandbox chain), same
// work, rounds taking turns. Workloads: a short chat answer (little generation) and an image.
//
// Vouchers: one channel per connection (a channel's calls are sequential by nature: each voucher extends the
// last charge), each deposited by a warm-up call outside the timed window; then each call signs its voucher
// (the official client's createPaymentPayload, timed: it is part of the call) and sends it. Exact: proofs
// pre-signed (not timed), as bench/run.ts does. A call counts when it answered 200 with a successful receipt.
// Settings: BENCH_CHANNEL_REQUESTS (160 per side per round), BENCH_PAID_CONCURRENCY (8), BENCH_ROUNDS (3),
// BENCH_WARMUP_REQUESTS (80 per side in an uncounted first round: every side warm, the chat model loaded).
//
// Also the official peer (bench/official-peer.ts: @x402/hono's middleware with @x402/evm's batch-settlement
// server scheme and in-process facilitator, the same built-in engines drawing the same picture and running the
// same demo chat model with the same seed), paid by the same official client the same way, on the same chain.
// The peer charges the short chat its quoted ceiling (the official server scheme has no metering); the gateway
// meters it.
//
// Payment left out: a second gateway child (bench/serve.ts with BENCH_PAYMENT_EXCLUDED=1) runs the same route's
// work at once for a call without payment and answers as a settled payment does; the same calls, one connection
// per in-flight slot, take their turn in each round. Printed: the p50 the voucher payment adds (vouchers' p50,
// signing included, minus the work-only p50) and vouchers' throughput as a share of the work alone.
import { createPublicClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import type { PaymentRequired } from '@x402/core/types';
import { paymentExcludedIn, startGatewayChild } from './gateway-child.ts';
import { jsonRequest, newAgent, processCpuSeconds, postOnce, send, sendOnce, stats, type LatencyStats } from './load.ts';
import { paidThroughput } from './paid-load.ts';
import { envNumber } from './env-number.ts';
import { startPeer } from './peer-compare.ts';

const SHORT_CHAT = { path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'Hi', max_tokens: 4, options: { seed: 1 } } };
const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' } };
const NETWORK = { 'X-Network': 'base' };
/** how a payment-left-out call is sent to this checkout's gateway: the way a paid call goes */
const paymentExcluded = paymentExcludedIn();
/** bench/official-peer.ts's PEER_IMAGE_PATH and PEER_CHAT_PATH (importing that module would start the peer) */
const PEER_PATHS = { [SHORT_CHAT.path]: '/api/v1/ai/chat', [IMAGE.path]: '/api/v1/ai/images' };

interface Side {
  settled: number;
  seconds: number;
  ms: number[];
  /** the server's CPU seconds over the side's timed window (null where unknown) */
  serverCpu?: number | null;
  /** vouchers: per call, the client's own part (signing the voucher, checking the receipt) */
  clientMs?: number[];
  /** vouchers: this process's CPU seconds over the side's timed window (the official clients' work) */
  clientCpu?: number;
}

const requestsPerRound = envNumber('BENCH_CHANNEL_REQUESTS', 160);
const concurrency = envNumber('BENCH_PAID_CONCURRENCY', 8);
const rounds = envNumber('BENCH_ROUNDS', 3);
const warmupRequests = envNumber('BENCH_WARMUP_REQUESTS', 80);


/** A channel payer: the official client, funded and deposited (the warm-up call, untimed). */
async function channelPayer(origin: URL, rpcUrl: string, call: { path: string; body: unknown }, required: PaymentRequired, faucet: URL) {
  const account = privateKeyToAccount(generatePrivateKey());
  const funded = await postOnce(faucet, '/sandbox/faucet', { network: 'base', address: account.address, amount: '100000000' });
  if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}`);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, createPublicClient({ transport: http(rpcUrl) })), {
    depositStrategy: () => '5000000',
  });
  const client = new x402HTTPClient(new x402Client().register('eip155:8453', scheme));
  const agent = newAgent(1);
  const pay = async (): Promise<{ ok: boolean; ms: number; clientMs: number; deposit: boolean }> => {
    const started = performance.now();
    const payload = await client.createPaymentPayload(required);
    const signed = performance.now();
    const reply = await send(agent, origin, jsonRequest(call.path, call.body, { ...NETWORK, ...client.encodePaymentSignatureHeader(payload) }));
    const header = (name: string) => {
      const value = reply.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    };
    const answered = performance.now();
    const result = await client.processPaymentResult(payload, (name) => header(name) ?? null, reply.status);
    const ms = performance.now() - started;
    const clientMs = signed - started + (performance.now() - answered);
    return { ok: reply.status === 200 && result.settleResponse?.success === true, ms, clientMs, deposit: (payload.payload as { type?: string }).type === 'deposit' };
  };
  const warm = await pay();
  if (!warm.ok || !warm.deposit) throw new Error('the warm-up call did not deposit');
  return { pay, close: () => agent.destroy() };
}

/** The same calls with payment left out (the BENCH_PAYMENT_EXCLUDED child): no header, a 200 is a call done. */
async function workOnlyRound(origin: URL, call: { path: string; body: unknown }, requests: number, serverPid: number): Promise<Side> {
  const agents = Array.from({ length: concurrency }, () => newAgent(1));
  const ms: number[] = [];
  let settled = 0;
  let next = 0;
  const cpuBefore = processCpuSeconds(serverPid);
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent) => {
      while (next < requests) {
        next++;
        const callStarted = performance.now();
        const reply = await send(agent, origin, jsonRequest(paymentExcluded(call).path, call.body, NETWORK));
        if (reply.status === 200) {
          settled++;
          ms.push(performance.now() - callStarted);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = processCpuSeconds(serverPid);
  for (const agent of agents) agent.destroy();
  return { settled, seconds, ms, serverCpu: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore };
}

async function voucherRound(
  origin: URL,
  rpcUrl: string,
  call: { path: string; body: unknown },
  required: PaymentRequired,
  requests: number,
  faucet = origin,
  serverPid?: number,
): Promise<Side> {
  const payers = await Promise.all(Array.from({ length: concurrency }, () => channelPayer(origin, rpcUrl, call, required, faucet)));
  const ms: number[] = [];
  const clientMs: number[] = [];
  let settled = 0;
  let next = 0;
  const cpuBefore = serverPid ? processCpuSeconds(serverPid) : null;
  const own = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    payers.map(async (payer) => {
      while (next < requests) {
        next++;
        const paid = await payer.pay();
        if (paid.ok) {
          settled++;
          ms.push(paid.ms);
          clientMs.push(paid.clientMs);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = serverPid ? processCpuSeconds(serverPid) : null;
  const used = process.cpuUsage(own);
  for (const payer of payers) payer.close();
  return { settled, seconds, ms, clientMs, clientCpu: (used.user + used.system) / 1e6, serverCpu: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore };
}

function summary(sides: Side[]): { rps: number; latency: LatencyStats; settled: number; cpuMsPerCall: number | null; clientCpuMsPerCall: number | null } {
  const settled = sides.reduce((n, side) => n + side.settled, 0);
  const seconds = sides.reduce((n, side) => n + side.seconds, 0);
  const cpu = sides.every((side) => typeof side.serverCpu === 'number') ? sides.reduce((n, side) => n + side.serverCpu!, 0) : null;
  const clientCpu = sides.every((side) => side.clientCpu !== undefined) ? sides.reduce((n, side) => n + side.clientCpu!, 0) : null;
  return {
    rps: settled / seconds,
    latency: stats(sides.flatMap((side) => side.ms)),
    settled,
    cpuMsPerCall: cpu === null ? null : (cpu * 1000) / settled,
    clientCpuMsPerCall: clientCpu === null ? null : (clientCpu * 1000) / settled,
  };
}
const cpuText = (side: { cpuMsPerCall: number | null; clientCpuMsPerCall: number | null }) =>
  (side.cpuMsPerCall === null ? '' : `, server CPU ${side.cpuMsPerCall.toFixed(1)} ms/call`) +
  (side.clientCpuMsPerCall === null ? '' : `, client CPU ${side.clientCpuMsPerCall.toFixed(1)} ms/call`);

const gateway = await startGatewayChild();
const workOnlyGateway = await startGatewayChild({ BENCH_PAYMENT_EXCLUDED: '1' });
try {
  const origin = gateway.url;
  const health = JSON.parse((await sendOnce(origin, { method: 'GET', path: '/healthz', headers: {} })).body.toString()) as { sandboxNetworks?: Record<string, { rpcUrl?: string }> };
  const rpcUrl = health.sandboxNetworks?.base?.rpcUrl;
  if (!rpcUrl) throw new Error('the gateway child runs no sandbox base chain');
  const lines: string[] = [];
  const decodeRequired = (reply: { headers: Record<string, string | string[] | undefined> }) =>
    JSON.parse(Buffer.from(String(reply.headers['payment-required']), 'base64').toString('utf8')) as PaymentRequired;
  // the official peer, paid in channels, on the gateway's chain and token at the gateway's image price
  const imageQuote = decodeRequired(await postOnce(origin, IMAGE.path, IMAGE.body, NETWORK));
  const exactOffer = imageQuote.accepts.find((offer) => offer.scheme === 'exact')!;
  const chatQuote = decodeRequired(await postOnce(origin, SHORT_CHAT.path, SHORT_CHAT.body, NETWORK));
  const chatOffer = chatQuote.accepts.find((offer) => offer.scheme === 'batch-settlement')!;
  const peerKey = generatePrivateKey();
  await postOnce(origin, '/sandbox/faucet', { network: 'base', address: privateKeyToAccount(peerKey).address });
  const peer = await startPeer({
    rpcUrl,
    chainId: 8453,
    asset: exactOffer.asset as `0x${string}`,
    payTo: exactOffer.payTo as `0x${string}`,
    amount: exactOffer.amount,
    chatAmount: chatOffer.amount,
    eip712: exactOffer.extra as { name: string; version: string },
    settlementKey: peerKey,
    scheme: 'batch-settlement',
  });
  for (const [name, call] of [['short chat', SHORT_CHAT], ['image', IMAGE]] as const) {
    const required = decodeRequired(await postOnce(origin, call.path, call.body, NETWORK));
    const peerCall = { path: PEER_PATHS[call.path]!, body: call.body };
    const peerRequired = decodeRequired(await postOnce(peer.url, peerCall.path, peerCall.body));
    const exactSides: Side[] = [];
    const voucherSides: Side[] = [];
    const peerSides: Side[] = [];
    const workOnlySides: Side[] = [];
    // round -1 warms every side (JIT, the chat model's first load, connection pools) and is not counted
    for (let round = -1; round < rounds; round++) {
      const warming = round < 0;
      const requests = warming ? warmupRequests : requestsPerRound;
      const keep = (sides: Side[], side: Side) => void (warming || sides.push(side));
      const runExact = async () => {
        const run = await paidThroughput(origin, { requests, concurrency, call, serverPid: gateway.pid });
        keep(exactSides, { settled: run.settled, seconds: run.seconds, ms: run.settledMs, serverCpu: run.serverCpuPct === null ? null : (run.serverCpuPct / 100) * run.seconds });
      };
      const runVouchers = async () => keep(voucherSides, await voucherRound(origin, rpcUrl, call, required, requests, origin, gateway.pid));
      const runPeer = async () => {
        keep(peerSides, await voucherRound(peer.url, rpcUrl, peerCall, peerRequired, requests, origin, peer.pid));
      };
      // taking turns, reversed every other round, so other load on the machine weighs on all alike
      const runWorkOnly = async () => keep(workOnlySides, await workOnlyRound(workOnlyGateway.url, call, requests, workOnlyGateway.pid));
      const order = [runExact, runVouchers, runPeer, runWorkOnly];
      for (const run of round % 2 === 0 ? order : order.reverse()) await run();
    }
    const exact = summary(exactSides);
    const vouchers = summary(voucherSides);
    const official = peerSides.length > 0 ? summary(peerSides) : undefined;
    const workOnly = summary(workOnlySides);
    lines.push(
      `${name}: vouchers ${vouchers.rps.toFixed(1)} paid calls/s (p50 ${vouchers.latency.p50.toFixed(1)} ms, ${vouchers.settled} calls${cpuText(vouchers)}) | ` +
        `exact ${exact.rps.toFixed(1)} paid calls/s (p50 ${exact.latency.p50.toFixed(1)} ms, ${exact.settled} calls${cpuText(exact)}) | ` +
        (official
          ? `official middleware, batch-settlement ${official.rps.toFixed(1)} paid calls/s (p50 ${official.latency.p50.toFixed(1)} ms, ${official.settled} calls${cpuText(official)}) | `
          : '') +
        `vouchers/exact ${(vouchers.rps / exact.rps).toFixed(2)}x${official ? `, vouchers/official ${(vouchers.rps / official.rps).toFixed(2)}x` : ''}; ` +
        `${concurrency} in flight, ${rounds} rounds of ${requestsPerRound}`,
      `${name}, payment left out: ${workOnly.rps.toFixed(1)} calls/s (p50 ${workOnly.latency.p50.toFixed(1)} ms, ${workOnly.settled} calls${cpuText(workOnly)}) | ` +
        `voucher payment adds ${(vouchers.latency.p50 - workOnly.latency.p50).toFixed(1)} ms to p50 ` +
        `(of a voucher call, the client signing it and checking its receipt: p50 ${stats(voucherSides.flatMap((side) => side.clientMs ?? [])).p50.toFixed(1)} ms); vouchers/work alone ${(vouchers.rps / workOnly.rps).toFixed(2)}x`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await peer.stop();
} finally {
  await Promise.all([gateway.stop(), workOnlyGateway.stop()]);
}
