// Starts a real anvil node (the binary shipped in the @foundry-rs/anvil-<os>-<arch> npm package) on
// 127.0.0.1, on a port the OS picks (or where `listen` says), and makes sure it never outlives this process.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Socket } from 'node:net';
import { bindHost, LOCAL_ONLY, localRpcUrl, publicRpcUrl, type ChainListen } from '../listen.ts';
import { rpcFetch } from '../../payments/facilitators/rpc-fetch.ts';

export interface AnvilOptions {
  /** the chain id the node reports (use the real one so official clients sign for it) */
  chainId: number;
  /** give up (and kill the node) when it does not answer JSON-RPC within this time; default 20 s */
  startupTimeoutMs?: number;
  /** further anvil flags, e.g. ['--no-mining'] */
  extraArgs?: string[];
  /** where it listens and the URL buyers get; default 127.0.0.1 on a port the OS picks */
  listen?: ChainListen;
}

export interface AnvilNode {
  /** where this process reaches the node */
  rpcUrl: string;
  /** where a buyer reaches it (listen.publicHost), else rpcUrl */
  publicRpcUrl: string;
  chainId: number;
  pid: number;
  /** kills the node (and its watchdog); safe to call twice */
  stop(): Promise<void>;
}

const ARCH: Partial<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };

/** Path of the anvil binary inside node_modules; never looked up on PATH, so the pinned version runs. */
export function anvilBinaryPath(): string {
  const arch = ARCH[process.arch];
  if (!arch) throw new Error(`anvil: no binary package for architecture ${process.arch}`);
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`anvil: package ${pkg} is not installed (optional dependency of @foundry-rs/anvil)`);
  }
  const bin = join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(bin)) throw new Error(`anvil: binary missing at ${bin}`);
  return bin;
}

// POSIX watchdog: runs anvil in the background and kills it as soon as our end of its stdin pipe
// closes, which also happens when this process dies by SIGKILL (no 'exit' handler runs then).
// `wait` makes the shell exit with anvil, so an early crash is seen as the child's exit.
const WATCHDOG = `
exec 3<&0
"$0" "$@" </dev/null &
pid=$!
( read _ <&3; kill -9 "$pid" 2>/dev/null ) &
wait "$pid"
`;

export async function startAnvil(options: AnvilOptions): Promise<AnvilNode> {
  const listen = options.listen ?? LOCAL_ONLY;
  const args = [
    '--host', bindHost(listen),
    '--port', String(listen.port),
    '--chain-id', String(options.chainId),
    // No pre-funded well-known dev accounts: the sandbox funds its own generated keys.
    '--accounts', '0',
    // Past 500 blocks anvil writes old states to ~/.foundry/anvil/tmp (~130 MB per 1,000 settlements, never
    // removed since anvil is killed) and mines later each block. Pruned, it writes none and keeps the last 64
    // in memory: nothing here reads an older block, and with none kept an eth_call at `latest` racing a new
    // block fails (local-evm.test.ts, 8 verifications in flight).
    '--prune-history', '64',
    ...(options.extraArgs ?? []),
  ];
  const posix = process.platform !== 'win32';
  const child = posix
    ? spawn('/bin/sh', ['-c', WATCHDOG, anvilBinaryPath(), ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        // own process group, so stop() can kill shell, watchdog and anvil at once
        detached: true,
      })
    : spawn(anvilBinaryPath(), args, { stdio: ['pipe', 'pipe', 'pipe'] });

  const killNow = (): void => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    try {
      if (posix) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // already gone
    }
  };
  process.on('exit', killNow);

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    process.off('exit', killNow);
    // while we wait for the exit, the child must hold the event loop open, or a caller awaiting stop()
    // at the top level would see the loop drain and the process end before stop() resolves
    child.ref();
    killNow();
    await exited;
  };

  try {
    const port = await waitForPort(child, options.startupTimeoutMs ?? 20_000, listen);
    const rpcUrl = localRpcUrl(listen, port);
    await waitForRpc(rpcUrl, options.chainId, options.startupTimeoutMs ?? 20_000);
    // From here on the node must not keep our event loop alive: the owner calls stop(), and if it
    // forgets, our exit closes the stdin pipe and the watchdog (or the 'exit' handler) kills anvil.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as Socket | null)?.unref();
    return { rpcUrl, publicRpcUrl: publicRpcUrl(listen, port), chainId: options.chainId, pid: child.pid ?? -1, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Reads anvil's startup banner for the port the OS gave it; afterwards its log output is discarded. An exit before
 * it names where anvil was to listen, and says so plainly when that port is taken.
 */
function waitForPort(child: ChildProcess, timeoutMs: number, listen: ChainListen): Promise<number> {
  const where = `${listen.host}:${listen.port === 0 ? '(a free port)' : listen.port}`;
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`anvil: no "Listening on" within ${timeoutMs} ms`)), timeoutMs);
    const onOut = (chunk: Buffer): void => {
      out += chunk.toString('utf8');
      const match = /Listening on \S*:(\d+)/.exec(out);
      if (match?.[1]) {
        cleanup();
        // Keep draining so a chatty node never blocks on a full pipe.
        child.stdout?.resume();
        resolve(Number(match[1]));
      } else if (out.length > 64_000) {
        out = out.slice(-4_000);
      }
    };
    const onErr = (chunk: Buffer): void => {
      err = (err + chunk.toString('utf8')).slice(-4_000);
    };
    const onExit = (code: number | null, signal: string | null): void =>
      fail(
        /address already in use|os error 98|EADDRINUSE/i.test(err)
          ? new Error(`anvil cannot listen on ${where}: port ${listen.port} is already in use (another sandbox or program holds it; free it, or choose other ports with sandbox.portBase)`)
          : new Error(`anvil exited before listening on ${where} (code ${code}, signal ${signal}): ${err.trim()}`),
      );
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onOut);
      child.off('exit', onExit);
    };
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
    };
    child.stdout?.on('data', onOut);
    child.stderr?.on('data', onErr);
    child.once('exit', onExit);
  });
}

/** Polls eth_chainId until the node answers with the expected chain id. */
async function waitForRpc(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      // node:http, as every RPC call of the service (evm-sandbox.ts says why not the global fetch)
      const response = await rpcFetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined && Number(body.result) === chainId) return;
      last = new Error(`unexpected eth_chainId answer ${JSON.stringify(body)}`);
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`anvil: JSON-RPC at ${rpcUrl} not ready within ${timeoutMs} ms`, { cause: last });
}
