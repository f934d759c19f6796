// node bench/svm-settle.ts: paid image calls on the sandbox Solana chain, `BENCH_PAID_CONCURRENCY` in flight, in
// BENCH_ROUNDS rounds taking turns (reversed every other round) so load from other jobs weighs on every side alike:
//   - this checkout's gateway (bench/serve.ts, default logging), proofs signed as @x402/fetch + @x402/svm's v1
//     scheme sign them (bench/payers.ts);
//   - the official x402 stack (bench/official-peer.ts: @x402/hono + the in-process @x402/core facilitator with
//     @x402/svm's exact scheme) on the same sandbox chain (the first gateway's) and mint, its own fee payer, proofs signed by
//     @x402/fetch 2.x with @x402/svm's exact client scheme; BENCH_OFFICIAL=0 leaves it out;
//   - with BENCH_BASELINE_DIR naming another checkout of this repository (with node_modules), its gateway too:
//     before and after a change, measured in one run.
// A call counts when it answered 200 with a successful settlement receipt. For the gateways, the CPU time of the
// gateway process per settled call (its sandbox chain, in the same process, included) is printed beside: less
// sensitive to other jobs' load than throughput. Settings: BENCH_PAID_REQUESTS (240 per
// side), BENCH_PAID_CONCURRENCY (8), BENCH_ROUNDS (6).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createKeyPairSignerFromPrivateKeyBytes, generateKeyPairSigner } from '@solana/kit';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { startGatewayChild } from './gateway-child.ts';
import { fixedLoad, jsonRequest, sendOnce, stats, type RequestSpec } from './load.ts';
import { paidThroughput, PAID_IMAGE } from './paid-load.ts';
import { solanaPayer } from './payers.ts';
import { decodedReceipt, header, startPeer } from './peer-compare.ts';
import type { PaymentRequired } from './sign.ts';
import { NETWORKS } from '../src/x402/networks.ts';
import { envNumber } from './env-number.ts';

const requests = envNumber('BENCH_PAID_REQUESTS', 240);
const concurrency = envNumber('BENCH_PAID_CONCURRENCY', 8);
const rounds = envNumber('BENCH_ROUNDS', 6);
const perRound = Math.ceil(requests / rounds);
const baselineDir = process.env.BENCH_BASELINE_DIR;
const withOfficial = process.env.BENCH_OFFICIAL !== '0';

/** One round's outcome on one side. */
interface Round {
  sent: number;
  settledMs: number[];
  seconds: number;
  statuses: Record<string, number>;
  /** CPU seconds of the gateway process (its sandbox chain included) over the round, where measured */
  serverCpuSeconds?: number;
}
interface Side {
  name: string;
  url: URL;
  round(): Promise<Round>;
  stop(): Promise<void>;
}


async function gatewaySide(name: string, serve?: string): Promise<Side> {
  const gateway = await startGatewayChild({ BENCH_NETWORKS: 'solana' }, serve);
  return {
    name,
    url: gateway.url,
    async round() {
      const run = await paidThroughput(gateway.url, { requests: perRound, concurrency, serverPid: gateway.pid, call: PAID_IMAGE, payer: solanaPayer('solana', perRound) });
      const round: Round = { sent: run.requests, settledMs: run.settledMs, seconds: run.seconds, statuses: run.statuses };
      return run.serverCpuPct === null ? round : { ...round, serverCpuSeconds: (run.serverCpuPct / 100) * run.seconds };
    },
    stop: () => gateway.stop(),
  };
}

/** The official stack on `gateway`'s sandbox Solana chain, selling the same image at the same price in the same mint. */
async function officialSide(gateway: URL): Promise<Side> {
  const faucet = async (address: string) => {
    const reply = await sendOnce(gateway, jsonRequest('/sandbox/faucet', { network: 'solana', address }));
    if (reply.status !== 200) throw new Error(`faucet answered ${reply.status}: ${reply.body.toString()}`);
  };
  const health = JSON.parse((await sendOnce(gateway, { method: 'GET', path: '/healthz', headers: {} })).body.toString()) as {
    sandboxNetworks?: Record<string, { rpcUrl?: string }>;
  };
  const rpcUrl = health.sandboxNetworks?.solana?.rpcUrl;
  if (!rpcUrl) throw new Error('the gateway runs no sandbox solana chain');
  const quote = JSON.parse((await sendOnce(gateway, jsonRequest(PAID_IMAGE.path, PAID_IMAGE.body, { 'X-Network': 'solana' }))).body.toString()) as PaymentRequired;
  const accept = quote.accepts[0] as { maxAmountRequired: string; asset: string; payTo: string };
  const network = NETWORKS.solana.caip2 as `${string}:${string}`;
  const feePayerSeed = randomBytes(32);
  await faucet((await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(feePayerSeed))).address);
  const peer = await startPeer({ family: 'svm', rpcUrl, network, asset: accept.asset, payTo: accept.payTo, amount: accept.maxAmountRequired, feePayerSeed: [...feePayerSeed] });
  try {
    const clients = await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const buyer = await generateKeyPairSigner();
        await faucet(buyer.address);
        return new x402HTTPClient(new x402Client().register(network, new ExactSvmScheme(buyer, { rpcUrl })));
      }),
    );
    const unpaid = await sendOnce(peer.url, jsonRequest(PAID_IMAGE.path, PAID_IMAGE.body));
    if (unpaid.status !== 402) throw new Error(`the official peer answered ${unpaid.status} unpaid`);
    const required = clients[0]!.getPaymentRequiredResponse((name) => header(unpaid, name), undefined);
    return {
      name: 'official @x402/hono + @x402/svm',
      url: peer.url,
      async round() {
        // signed just before the round: a Solana proof lives as long as its blockhash
        const specs: RequestSpec[] = [];
        for (let i = 0; i < perRound; i++) {
          const client = clients[i % concurrency]!;
          specs.push(jsonRequest(PAID_IMAGE.path, PAID_IMAGE.body, client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))));
        }
        const run = await fixedLoad(peer.url, specs, concurrency);
        const statuses: Record<string, number> = {};
        for (const reply of run.replies) statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
        const settled = run.replies.filter((r) => r.status === 200 && decodedReceipt(header(r, 'PAYMENT-RESPONSE')));
        return { sent: specs.length, settledMs: settled.map((r) => r.ms), seconds: run.seconds, statuses };
      },
      stop: () => peer.stop(),
    };
  } catch (error) {
    await peer.stop();
    throw error;
  }
}

const ours = await gatewaySide('gateway (this checkout)');
const sides: Side[] = [ours];
try {
  // on our gateway's chain: its litesvm serves the official stack's RPCs too (in the gateway's process, as it
  // serves the gateway's own; the rounds never overlap)
  if (withOfficial) sides.push(await officialSide(ours.url));
  if (baselineDir) sides.push(await gatewaySide(`gateway (${baselineDir})`, join(baselineDir, 'bench/serve.ts')));
  const results = new Map<Side, Round[]>(sides.map((side) => [side, []]));
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 1 ? [...sides].reverse() : sides) results.get(side)!.push(await side.round());
  }
  const rows = sides.map((side) => {
    const runs = results.get(side)!;
    const seconds = runs.reduce((n, r) => n + r.seconds, 0);
    const settledMs = runs.flatMap((r) => r.settledMs);
    const statuses: Record<string, number> = {};
    for (const run of runs) for (const [status, n] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
    const cpu = runs.every((r) => r.serverCpuSeconds !== undefined) ? runs.reduce((n, r) => n + r.serverCpuSeconds!, 0) : undefined;
    return {
      name: side.name,
      rps: settledMs.length / seconds,
      latency: stats(settledMs),
      settled: settledMs.length,
      sent: runs.reduce((n, r) => n + r.sent, 0),
      statuses,
      cpuMsPerCall: cpu === undefined ? undefined : (cpu * 1000) / settledMs.length,
    };
  });
  process.stdout.write(`paid image calls on the sandbox Solana chain, ${concurrency} in flight, ${rounds} interleaved rounds:\n`);
  for (const row of rows) {
    process.stdout.write(
      `  ${row.name.padEnd(40)}${row.rps.toFixed(1).padStart(7)} req/s  p50 ${row.latency.p50.toFixed(1).padStart(6)} ms  p99 ${row.latency.p99.toFixed(1).padStart(6)} ms  ` +
        `${row.cpuMsPerCall === undefined ? '' : `gateway CPU ${row.cpuMsPerCall.toFixed(1)} ms/call  `}settled ${row.settled}/${row.sent} (${Object.entries(row.statuses).map(([s, n]) => `${s}x${n}`).join(' ')})\n`,
    );
  }
  for (const row of rows.slice(1)) process.stdout.write(`  RATIO ${rows[0]!.name} / ${row.name}: ${(rows[0]!.rps / row.rps).toFixed(2)}x\n`);
} finally {
  for (const side of sides) await side.stop();
}
