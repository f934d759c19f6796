// Settlement batching (config settlementBatching) measured against one transaction per settlement, same run:
// two gateway children on their own sandbox base chains, one with batching off and one with it on, paid image
// calls (bench/paid-load.ts, proofs pre-signed as x402-fetch signs them) in rounds taking turns (reversed every
// other round), at BENCH_PAID_CONCURRENCY (8) in flight and at 1 in flight. Prints settled req/s (all rounds
// pooled), the median of the rounds' p50s and the highest p99, and blocks mined per settled call (the sandbox
// mines one block per transaction: below 1.0, calls shared transactions).
//   node bench/batching.ts   (BENCH_PAID_REQUESTS per side and concurrency, default 120; BENCH_ROUNDS, default 3)
import { startGatewayChild, type GatewayChild } from './gateway-child.ts';
import { paidThroughput, PAID_IMAGE, type PaidRun } from './paid-load.ts';
import { evmPayer } from './payers.ts';
import { envNumber } from './env-number.ts';

const requests = envNumber('BENCH_PAID_REQUESTS', 120);
const rounds = envNumber('BENCH_ROUNDS', 3);
const concurrencies = [envNumber('BENCH_PAID_CONCURRENCY', 8), 1];

interface Side {
  name: string;
  gateway: GatewayChild;
  rpcUrl: string;
  runs: PaidRun[];
  blocks: number;
}

async function rpcUrlOf(gateway: GatewayChild): Promise<string> {
  const health = (await (await fetch(new URL('/healthz', gateway.url))).json()) as { sandboxNetworks?: { base?: { rpcUrl?: string } } };
  const url = health.sandboxNetworks?.base?.rpcUrl;
  if (!url) throw new Error('the gateway runs no sandbox base chain');
  return url;
}

async function blockNumber(rpcUrl: string): Promise<number> {
  const reply = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' });
  return Number(((await reply.json()) as { result: string }).result);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// BENCH_BATCHING_SIDES=0,0 (or 1,1) runs the same setting on both sides: how far apart two equal gateways measure
const settings = (process.env.BENCH_BATCHING_SIDES ?? '0,1').split(',').map((side) => side.trim() === '1');
const gateways = await Promise.all(settings.map((on) => startGatewayChild({ BENCH_SETTLEMENT_BATCHING: on ? '1' : '0' })));
try {
  const lines: string[] = [`settlement batching, paid image calls, ${requests} per side and load, ${rounds} interleaved rounds:`];
  for (const concurrency of concurrencies) {
    const sides: Side[] = await Promise.all(
      gateways.map(async (gateway, i) => ({ name: `${i + 1}: ${settings[i] ? 'batched (Multicall3)' : 'one transaction each'}`, gateway, rpcUrl: await rpcUrlOf(gateway), runs: [], blocks: 0 })),
    );
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        // blocks are counted from after the buyers' faucet mints: paidThroughput funds them before it sends
        const perRound = Math.ceil(requests / rounds);
        const startBlock = { value: 0 };
        const run = await paidThroughput(side.gateway.url, {
          requests: perRound,
          concurrency,
          call: PAID_IMAGE,
          payer: withHook(async () => void (startBlock.value = await blockNumber(side.rpcUrl))),
        });
        side.blocks += (await blockNumber(side.rpcUrl)) - startBlock.value;
        side.runs.push(run);
      }
    }
    lines.push(`  ${concurrency} in flight:`);
    for (const side of sides) {
      const settled = side.runs.reduce((sum, run) => sum + run.settled, 0);
      const seconds = side.runs.reduce((sum, run) => sum + run.seconds, 0);
      const p50 = median(side.runs.map((run) => run.latency.p50));
      const p99 = Math.max(...side.runs.map((run) => run.latency.p99));
      lines.push(
        `    ${side.name.padEnd(25)}${(settled / seconds).toFixed(1).padStart(7)} req/s  p50 ${p50.toFixed(1).padStart(6)} ms  p99 ${p99.toFixed(1).padStart(6)} ms  ` +
          `${settled}/${side.runs.reduce((sum, run) => sum + run.requests, 0)} settled, ${(side.blocks / settled).toFixed(2)} blocks per call`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
}

/** The default EVM payer, calling `beforeSigning` once its buyers are funded (the first proof is signed after that). */
function withHook(beforeSigning: () => Promise<void>) {
  const payer = evmPayer();
  let hooked = false;
  return {
    ...payer,
    buyer: async (origin: URL) => {
      const sign = await payer.buyer(origin);
      return async (required: Parameters<typeof sign>[0]) => {
        if (!hooked) {
          hooked = true;
          await beforeSigning();
        }
        return sign(required);
      };
    },
  };
}
