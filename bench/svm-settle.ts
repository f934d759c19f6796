// node bench/svm-settle.ts: paid image calls on the sandbox Solana chain (X-Network: solana), each with its own
// proof signed as @x402/fetch + @x402/svm's v1 scheme sign it (bench/payers.ts), `BENCH_PAID_CONCURRENCY` in
// flight, through this checkout's gateway (bench/serve.ts, default logging). With BENCH_BASELINE_DIR naming
// another checkout of this repository (with node_modules), its gateway runs beside this one and the two take
// turns in BENCH_ROUNDS rounds (reversed every other round) so load from other jobs weighs on both alike: the
// same run measures before and after a change. Settings: BENCH_PAID_REQUESTS (240 per side),
// BENCH_PAID_CONCURRENCY (8), BENCH_ROUNDS (6).
import { join } from 'node:path';
import { startGatewayChild, type GatewayChild } from './gateway-child.ts';
import { stats } from './load.ts';
import { paidThroughput, PAID_IMAGE, type PaidRun } from './paid-load.ts';
import { solanaPayer } from './payers.ts';

const num = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const requests = num('BENCH_PAID_REQUESTS', 240);
const concurrency = num('BENCH_PAID_CONCURRENCY', 8);
const rounds = num('BENCH_ROUNDS', 6);
const baselineDir = process.env.BENCH_BASELINE_DIR;

interface Side {
  name: string;
  gateway: GatewayChild;
  runs: PaidRun[];
}

const env = { BENCH_NETWORKS: 'solana' };
const sides: Side[] = [{ name: 'this checkout', gateway: await startGatewayChild(env), runs: [] }];
try {
  if (baselineDir) sides.push({ name: `baseline ${baselineDir}`, gateway: await startGatewayChild(env, join(baselineDir, 'bench/serve.ts')), runs: [] });
  const perRound = Math.ceil(requests / rounds);
  for (let round = 0; round < rounds; round++) {
    const turns = round % 2 === 1 ? [...sides].reverse() : sides;
    for (const side of turns) {
      side.runs.push(
        await paidThroughput(side.gateway.url, { requests: perRound, concurrency, serverPid: side.gateway.pid, call: PAID_IMAGE, payer: solanaPayer('solana', perRound) }),
      );
    }
  }
  const rows = sides.map((side) => {
    const settled = side.runs.reduce((n, r) => n + r.settled, 0);
    const sent = side.runs.reduce((n, r) => n + r.requests, 0);
    const seconds = side.runs.reduce((n, r) => n + r.seconds, 0);
    const cpu = side.runs.reduce((n, r) => n + ((r.serverCpuPct ?? NaN) / 100) * r.seconds, 0) / seconds;
    const latency = stats(side.runs.flatMap((r) => r.settledMs));
    const statuses: Record<string, number> = {};
    for (const run of side.runs) for (const [status, n] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
    return { name: side.name, rps: settled / seconds, latency, settled, sent, cpu, statuses };
  });
  process.stdout.write(`paid image calls on the sandbox Solana chain, ${concurrency} in flight, ${rounds} interleaved rounds:\n`);
  for (const row of rows) {
    process.stdout.write(
      `  ${row.name.padEnd(40)}${row.rps.toFixed(1).padStart(7)} req/s  p50 ${row.latency.p50.toFixed(1).padStart(6)} ms  p99 ${row.latency.p99.toFixed(1).padStart(6)} ms  ` +
        `server CPU ${(row.cpu * 100).toFixed(0)}%  settled ${row.settled}/${row.sent} (${Object.entries(row.statuses).map(([s, n]) => `${s}x${n}`).join(' ')})\n`,
    );
  }
  if (rows.length === 2) process.stdout.write(`  RATIO this / baseline: ${(rows[0]!.rps / rows[1]!.rps).toFixed(2)}x\n`);
} finally {
  for (const side of sides) await side.gateway.stop();
}
