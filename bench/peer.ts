// npm run bench:peer (= node bench/peer.ts): only the comparison with the official x402 stack (bench/peer-compare.ts),
// against a fresh gateway child (bench/serve.ts, default logging). Same settings as bench/run.ts: BENCH_PAID_REQUESTS
// (200), BENCH_PAID_CONCURRENCY (8), BENCH_ROUNDS (5), BENCH_CONNECTIONS (50), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1).
import { startGatewayChild } from './gateway-child.ts';
import { compareWithOfficial, formatComparison } from './peer-compare.ts';
import { PAID_IMAGE } from './paid-load.ts';
import { envNumber } from './env-number.ts';

const gateway = await startGatewayChild();
try {
  const comparison = await compareWithOfficial(gateway.url, {
    call: PAID_IMAGE,
    requests: envNumber('BENCH_PAID_REQUESTS', 200),
    concurrency: envNumber('BENCH_PAID_CONCURRENCY', 8),
    rounds: envNumber('BENCH_ROUNDS', 5),
    unpaid: { connections: envNumber('BENCH_CONNECTIONS', 50), seconds: envNumber('BENCH_SECONDS', 5), warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1) },
  });
  process.stdout.write(`${formatComparison(comparison).join('\n')}\n`);
} finally {
  await gateway.stop();
}
