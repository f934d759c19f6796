// node bench/memory.ts: the service's resident memory as an operator sees it. Starts `npm start` (the sandbox
// defaults: every sandbox network, default logging, a temp DATA_DIR, a free port), waits until it listens and
// its RSS settles (the idle figure), then makes BENCH_MEMORY_CALLS (1000) paid image calls on base, 8 in flight
// (bench/paid-load.ts: proofs signed by official client code), and reports the RSS right after them and once
// settled again. RSS is the service process's own (VmRSS of /proc/<pid>/status); the sandbox anvil processes
// are reported beside it, not in it. Settles: after at least 15 s (V8 shrinks its heap once idle), RSS read
// every second until two reads 5 s apart differ by under 2 MB (at most BENCH_MEMORY_SETTLE_SECONDS, 60).
//
// BENCH_MEMORY_SECONDS=600: mixed paid load instead of the image calls, for that long: four buyers at once, one call
// in flight each, paid by the official client on base (bench/official-payer.ts): images under `exact`, the demo
// chat under `exact`, the same chat streamed under `exact`, and the chat under batch-settlement vouchers. RSS is
// printed every minute; "flat" compares the last minute's with the first's (the first minute warms the service).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PAID_IMAGE, paidThroughput } from './paid-load.ts';
import { officialPayer, sandboxRpcUrl, type SchemeName } from './official-payer.ts';
import { envNumber } from './env-number.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CALLS = envNumber('BENCH_MEMORY_CALLS', 1000);
const SETTLE_SECONDS = envNumber('BENCH_MEMORY_SETTLE_SECONDS', 60);
const MIXED_SECONDS = Number(process.env.BENCH_MEMORY_SECONDS ?? 0);
const DEMO_CHAT = { path: '/v1/chat/completions', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Tell me about the sea' }], max_tokens: 16 } };
const MIXED: [string, SchemeName, { path: string; body: object }][] = [
  ['images, exact', 'exact', PAID_IMAGE],
  ['chat, exact', 'exact', DEMO_CHAT],
  ['streamed chat, exact', 'exact', { ...DEMO_CHAT, body: { ...DEMO_CHAT.body, stream: true } }],
  ['chat, vouchers', 'vouchers', DEMO_CHAT],
];

/** The mixed paid load for `seconds`, RSS read every minute; calls done per kind. */
async function mixedLoad(origin: URL, pid: number, seconds: number): Promise<{ minutes: number[]; calls: Record<string, number> }> {
  const rpcUrl = await sandboxRpcUrl(origin);
  const payers = await Promise.all(MIXED.map(async ([name, scheme, call]) => ({ name, payer: await officialPayer(origin, rpcUrl, scheme, call) })));
  const calls: Record<string, number> = {};
  const minutes: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const sampler = setInterval(() => {
    minutes.push(rssMb(pid) ?? NaN);
    console.log(`  minute ${minutes.length}: ${minutes.at(-1)!.toFixed(0)} MB, calls so far ${JSON.stringify(calls)}`);
  }, 60_000);
  try {
    await Promise.all(
      payers.map(async ({ name, payer }) => {
        while (Date.now() < deadline) {
          await payer.pay();
          calls[name] = (calls[name] ?? 0) + 1;
        }
      }),
    );
  } finally {
    clearInterval(sampler);
    for (const { payer } of payers) payer.agent.destroy();
  }
  return { minutes, calls };
}
const MIN_IDLE_SECONDS = 15;

/** Resident set of `pid` in MB, undefined once it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      try {
        return Number(readFileSync(`/proc/${candidate}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

async function settledRss(pid: number): Promise<number> {
  const reads: number[] = [];
  const deadline = Date.now() + SETTLE_SECONDS * 1000;
  for (;;) {
    reads.push(rssMb(pid) ?? NaN);
    const [earlier, now] = [reads.at(-6), reads.at(-1)!];
    const stable = earlier !== undefined && Math.abs(now - earlier) < 2 && reads.length > MIN_IDLE_SECONDS;
    if (stable || Date.now() >= deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'x402-bench-memory-'));
// `npm start` as an operator types it: npm runs the start script through a shell, which runs node
const npm = process.env.npm_execpath
  ? { command: process.execPath, args: [process.env.npm_execpath, 'start', '--silent'] }
  : { command: 'npm', args: ['start', '--silent'] };
const service = spawn(npm.command, npm.args, {
  cwd: ROOT,
  env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
  stdio: ['ignore', 'pipe', 'inherit'],
  detached: true, // its own process group, so the shell, node and the sandbox chains stop together
});
const stop = () => {
  try {
    process.kill(-service.pid!, 'SIGTERM');
  } catch {
    // already gone
  }
};
process.on('exit', () => {
  stop();
  rmSync(dataDir, { recursive: true, force: true });
});

try {
  // the "service listening" log line names the URL and (pino's default) the service's pid
  const listening = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const lines = createInterface({ input: service.stdout! });
    lines.on('line', (line) => {
      if (!line.includes('"service listening"')) return;
      const { url, pid } = JSON.parse(line) as { url: string; pid: number };
      resolve({ url, pid });
      lines.removeAllListeners('line');
      service.stdout!.resume(); // the request log is read and dropped
    });
    service.once('exit', (code) => reject(new Error(`npm start exited with ${code} before listening`)));
  });
  const pid = listening.pid;
  const idle = await settledRss(pid);
  const mb = (value: number) => `${value.toFixed(0)} MB`;
  const env = ['MALLOC_ARENA_MAX', 'NODE_OPTIONS'].map((name) => `${name}=${process.env[name] ?? '(unset)'}`).join(' ');
  console.log(`service RSS (npm start, sandbox defaults; ${env}; start script: ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start})`);
  console.log(`  idle after start, settled:        ${mb(idle)}`);
  if (MIXED_SECONDS > 0) {
    console.log(`  mixed paid load for ${MIXED_SECONDS} s (${MIXED.map(([name]) => name).join('; ')}), one call in flight each:`);
    const { minutes, calls } = await mixedLoad(new URL(listening.url), pid, MIXED_SECONDS);
    const [first, last] = [minutes[0]!, minutes.at(-1)!];
    console.log(`  calls: ${JSON.stringify(calls)}`);
    console.log(`  RSS after the first minute ${mb(first)}, after the last ${mb(last)}: ${(((last - first) / first) * 100).toFixed(1)}% (flat within 10%: ${Math.abs(last - first) <= first * 0.1 ? 'yes' : 'no'})`);
  } else {
    const run = await paidThroughput(new URL(listening.url), { requests: CALLS, concurrency: 8, serverPid: pid });
    console.log(`  right after ${CALLS} paid image calls: ${mb(rssMb(pid)!)}  (${run.settled} settled, ${run.rps.toFixed(1)}/s, p50 ${run.latency.p50.toFixed(0)} ms)`);
    if (run.settled !== CALLS) process.exitCode = 1;
  }
  console.log(`  settled after them:               ${mb(await settledRss(pid))}`);
  console.log(`  sandbox chain processes (not in the figures above): ${mb(childrenOf(pid).reduce((sum, child) => sum + (rssMb(child) ?? 0), 0))}`);
} finally {
  stop();
}
