// `x402-ai proxy` and its siblings run as a buyer runs them: the CLI in a child process, the key in its
// environment, a spend file of the test's own. startProxy waits for the line naming the URL it listens on.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { startTestService } from './service.ts';
import type { RunningService } from '../../src/service.ts';
import type { NetworkName } from '../../src/x402/networks.ts';

export const CLI = new URL('../../src/client/cli.ts', import.meta.url).pathname;

export interface RunningProxy {
  url: string;
  /** everything it printed on stdout so far, a line each */
  lines: string[];
  /** what it printed on stderr (--verbose request lines, failures) */
  stderr(): string;
  process: ChildProcess;
  /** SIGTERM, then its exit (what --refund-on-exit does runs first) */
  stop(): Promise<void>;
}

export async function startProxy(args: string[], env: Record<string, string>): Promise<RunningProxy> {
  const child = spawn(process.execPath, [CLI, 'proxy', '--port', '0', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`x402-ai proxy exited (${child.exitCode}) before listening\n${stderr}`)));
  });
  return {
    url,
    lines,
    stderr: () => stderr,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

const run = promisify(execFile);

/** A command that ends (`proxy --refund`, `spend`): its exit code and output. */
export async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * What a proxy test file runs against: a sandbox gateway on `networks` and a scratch folder (spend files, homes),
 * made before its tests and removed after them.
 */
export function proxyTestBed(networks: NetworkName[]): { service: () => RunningService; dir: () => string } {
  let service: RunningService | undefined;
  let dir: string | undefined;
  before(async () => {
    service = await startTestService({ networks });
    dir = mkdtempSync(join(tmpdir(), 'x402-proxy-'));
  });
  after(async () => {
    await service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return { service: () => service!, dir: () => dir! };
}
