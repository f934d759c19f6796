// Starts test/support/serve-instance.ts as a separate process and collects what it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./serve-instance.ts', import.meta.url));

export interface ChildService {
  url: string;
  process: ChildProcess;
  /** every JSON line it printed so far (its pino logs) */
  logs: Record<string, unknown>[];
  /** everything it wrote so far, stdout and stderr, as written (for tests that grep all of it) */
  output: string[];
  /** SIGTERM and wait for the exit (graceful stop); deletes its data dir */
  stop(): Promise<void>;
  /** SIGKILL: no handler runs, nothing is cleaned up by the child */
  kill(): Promise<void>;
}

export async function startChildService(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  options: { dataDir?: string; startupTimeoutMs?: number } = {},
): Promise<ChildService> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'x402-child-'));
  const child = spawn(process.execPath, [SCRIPT], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...env,
      X402_CHILD_CONFIG: JSON.stringify({ host: '127.0.0.1', port: 0, logLevel: 'info', dataDir, ...config }),
    },
  });
  const logs: Record<string, unknown>[] = [];
  const output: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output.push(chunk.toString());
    if (stderr.length < 20_000) stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    // a bound for failures only: on a loaded CI machine a child (chains, ledger, models) can take long to start
    const timer = setTimeout(() => reject(new Error(`child service did not start in time\n${stderr}`)), options.startupTimeoutMs ?? 120_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (typeof parsed.listening === 'string') {
        clearTimeout(timer);
        resolve(parsed.listening);
      } else logs.push(parsed);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`child service exited during startup (${child.exitCode ?? child.signalCode})\n${stderr}`));
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const cleanup = () => {
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    url,
    process: child,
    logs,
    output,
    async stop() {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      cleanup();
    },
    async kill() {
      if (running()) {
        child.kill('SIGKILL');
        await exited;
      }
      cleanup();
    },
  };
}
