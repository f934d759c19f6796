// Starts bench/serve.ts (the real gateway on a sandbox chain) as a child process and waits for the
// {"url","pid"} line it prints once listening. stop() closes its stdin (a graceful stop), SIGKILL after 15 s.
// The child runs as `npm start` runs the service: its checkout's start script's environment and node flags
// (scripts/start-script.ts), from the checkout's root.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { readStartScript } from '../scripts/start-script.ts';

const SERVE = fileURLToPath(new URL('./serve.ts', import.meta.url));

/**
 * A call to a BENCH_PAYMENT_EXCLUDED child of the checkout at `root` (this one by default), sent the way a paid call
 * goes. Where the checkout has the paid lane (src/http/paid/paid-lane.ts), a paid call takes it, and so does this
 * call, as it is. A checkout from before it has the quote lane (quote-lane.ts), which takes unpaid requests to exact
 * paths only: without the query it would read, price and quote each such call, then hand it to the app, which does
 * all of it again (2-9% of a chat call's server CPU, 30-120 us), work no paid call there does (its payment header
 * sends it past that lane).
 */
export function paymentExcludedIn(root = dirname(dirname(SERVE))): <T extends { path: string }>(call: T) => T {
  const quoteLaneOnly = existsSync(join(root, 'src/http/paid/quote-lane.ts'));
  return (call) => (quoteLaneOnly ? { ...call, path: `${call.path}?payment=excluded` } : call);
}

export interface GatewayChild {
  url: URL;
  pid: number;
  stop(): Promise<void>;
}

/** `serve` may name another checkout's bench/serve.ts (with its own node_modules), to measure two versions side by side. */
export function startGatewayChild(env: Record<string, string> = {}, serve = SERVE): Promise<GatewayChild> {
  const root = dirname(dirname(serve));
  const start = readStartScript(root);
  return startReportingChild(serve, { env: { ...start.env, ...env }, nodeArgs: start.nodeArgs, cwd: root });
}

export interface ChildOptions {
  /** the script's own arguments */
  args?: string[];
  env?: Record<string, string>;
  /** node's arguments, before the script */
  nodeArgs?: string[];
  cwd?: string;
}

/** Any script that prints {"url","pid"} once listening and stops when stdin closes, started by a plain `node`. */
export async function startReportingChild(script: string, { args = [], env = {}, nodeArgs = [], cwd = process.cwd() }: ChildOptions = {}): Promise<GatewayChild> {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { cwd, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} did not report its URL within 120 s`)), 120_000);
      // the first line naming the URL: log lines come before and after it
      const lines = createInterface({ input: child.stdout! });
      const onLine = (text: string) => {
        if (!text.startsWith('{"url"')) return;
        lines.off('line', onLine);
        // the request log goes on, a line per request: drained unread from here on, so splitting it into
        // lines costs the load generator (this process) nothing while it measures
        lines.close();
        child.stdout!.resume();
        clearTimeout(timer);
        resolve(text);
      };
      lines.on('line', onLine);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${script} exited with ${child.exitCode ?? child.signalCode} before reporting its URL`));
      });
    });
    const { url, pid } = JSON.parse(line) as { url: string; pid: number };
    return { url: new URL(url), pid, stop };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
