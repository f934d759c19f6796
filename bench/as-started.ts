// A bench that measures the service inside its own process runs as `npm start` runs the service: with the start
// script's environment and node flags (scripts/start-script.ts), from the package root. It calls runAsStarted()
// first: the process that was started by hand runs the script again as such a child, passes its signals on, and
// exits as the child does; the child (marked in its environment) goes on.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { readStartScript } from '../scripts/start-script.ts';

const MARK = 'BENCH_AS_STARTED';
const ROOT = join(import.meta.dirname, '..');

/** Returns in the child started as `npm start` starts node; in any other process, runs `script` as that child. */
export async function runAsStarted(script: string): Promise<void> {
  if (process.env[MARK] === '1') return;
  const start = readStartScript(ROOT);
  const child = spawn(process.execPath, [...start.nodeArgs, script, ...process.argv.slice(2)], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, ...start.env, [MARK]: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  const code = await new Promise<number>((resolve) => child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
  process.exit(code);
}
