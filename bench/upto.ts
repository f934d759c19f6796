// node bench/upto.ts [calls per scheme, default BENCH_UPTO_CALLS or 20]: only the exact-vs-upto comparison
// (bench/upto-compare.ts) against a fresh gateway child (bench/serve.ts, sandbox base chain). npm run bench runs it
// too, as its section (h).
import { startGatewayChild } from './gateway-child.ts';
import { compareExactAndUpto, formatExactUpto } from './upto-compare.ts';

const calls = Number(process.argv[2] ?? process.env.BENCH_UPTO_CALLS ?? 20);
const gateway = await startGatewayChild();
try {
  process.stdout.write(`${formatExactUpto(await compareExactAndUpto(gateway.url, { calls })).join('\n')}\n`);
} finally {
  await gateway.stop();
}
