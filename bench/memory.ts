// node bench/memory.ts: the service's resident memory as an operator sees it. Starts `npm start` (the sandbox
// defaults: every sandbox network, default logging, a temp DATA_DIR, a free port), waits until it listens and
// its RSS settles (the idle figure), then makes BENCH_MEMORY_CALLS (1000) paid image calls on base, 8 in flight
// (bench/paid-load.ts: proofs signed by official client code), and reports the RSS right after them and once
// settled again. RSS is the service process's own (VmRSS of /proc/<pid>/status); the sandbox anvil processes
// are reported beside it, not in it. Settles: after at least 15 s (V8 shrinks its heap once idle), RSS read
// every second until two reads 5 s apart differ by under 2 MB (at most BENCH_MEMORY_SETTLE_SECONDS, 60).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { paidThroughput } from './paid-load.ts';
import { envNumber } from './env-number.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CALLS = envNumber('BENCH_MEMORY_CALLS', 1000);
const SETTLE_SECONDS = envNumber('BENCH_MEMORY_SETTLE_SECONDS', 60);
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
  const run = await paidThroughput(new URL(listening.url), { requests: CALLS, concurrency: 8, serverPid: pid });
  const afterCalls = rssMb(pid)!;
  const afterSettled = await settledRss(pid);
  const chains = childrenOf(pid).reduce((sum, child) => sum + (rssMb(child) ?? 0), 0);
  const mb = (value: number) => `${value.toFixed(0)} MB`;
  const env = ['MALLOC_ARENA_MAX', 'NODE_OPTIONS'].map((name) => `${name}=${process.env[name] ?? '(unset)'}`).join(' ');
  console.log(`service RSS (npm start, sandbox defaults; ${env}; start script: ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start})`);
  console.log(`  idle after start, settled:        ${mb(idle)}`);
  console.log(`  right after ${CALLS} paid image calls: ${mb(afterCalls)}  (${run.settled} settled, ${run.rps.toFixed(1)}/s, p50 ${run.latency.p50.toFixed(0)} ms)`);
  console.log(`  settled after them:               ${mb(afterSettled)}`);
  console.log(`  sandbox chain processes (not in the figures above): ${mb(chains)}`);
  if (run.settled !== CALLS) process.exitCode = 1;
} finally {
  stop();
}
