// The Docker image's environment (the Dockerfile's ENV, read from the file) as the service starts with it, minus
// the container: its sandbox chains bind every interface at SANDBOX_PORT_BASE + n and /healthz hands out URLs at
// SANDBOX_PUBLIC_HOST (localhost) that a buyer on the host reaches, as a `docker run -p` would forward them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dockerfileEnv, logicalLines } from '../scripts/dockerfile-sources.ts';
import { parseStartScript, readStartScript } from '../scripts/start-script.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'src/main.ts');

test('the Dockerfile ENV of the final stage is read as Docker sets it', () => {
  assert.deepEqual(dockerfileEnv('FROM a AS deps\nENV ONLY_IN_DEPS=1\nFROM b\nENV A=1 \\\n    B="two words"\nENV C 3 4\n'), { A: '1', B: 'two words', C: '3 4' });
  const image = dockerfileEnv(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  assert.deepEqual([image.HOST, image.SANDBOX_HOST, image.SANDBOX_PORT_BASE, image.SANDBOX_PUBLIC_HOST], ['0.0.0.0', '0.0.0.0', '8545', 'localhost']);
});

/** two consecutive ports free on loopback a moment ago (the container's fixed 8545 may be taken here) */
async function freePortPair(): Promise<number> {
  const tryBind = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * 40_000);
    if ((await tryBind(first)) && (await tryBind(first + 1))) return first;
  }
}

test("with the image's environment, /healthz hands out sandbox RPC URLs a buyer on the host can use", async (t) => {
  const image = dockerfileEnv(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-docker-env-'));
  const portBase = await freePortPair();
  // the image's settings, but the gateway on loopback at a port the OS picks, a throwaway /data and a port base
  // free on this machine; the chains bind loopback (tests bind no other address), and /healthz names the image's
  // public host for them
  const env = { ...image, PATH: process.env.PATH ?? '', HOST: '127.0.0.1', SANDBOX_HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, SANDBOX_PORT_BASE: String(portBase), SANDBOX_NETWORKS: 'base,solana', LOG_FORMAT: 'json' };
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.after(async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const listening = out.split('\n').map((line) => line.trim() && (JSON.parse(line) as { msg?: string; url?: string })).find((line) => line && line.msg === 'service listening');
      if (listening && listening.url) resolve(listening.url);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
  });
  const port = new URL(url).port;
  const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { mode: string; sandboxNetworks: Record<string, { rpcUrl: string }> };
  assert.equal(health.mode, 'sandbox');
  assert.equal(health.sandboxNetworks.base!.rpcUrl, `http://localhost:${portBase}`);
  assert.equal(health.sandboxNetworks.solana!.rpcUrl, `http://localhost:${portBase + 1}`);
  const rpc = async (rpcUrl: string, method: string) =>
    ((await (await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) })).json()) as { result: unknown }).result;
  assert.equal(await rpc(health.sandboxNetworks.base!.rpcUrl, 'eth_chainId'), '0x2105');
  assert.equal(await rpc(health.sandboxNetworks.solana!.rpcUrl, 'getHealth'), 'ok');
});

test('the image starts node with the environment and flags of `npm start` (scripts/start-script.ts)', () => {
  assert.deepEqual(parseStartScript('A=1 B_2=x node --flag=3 --import ./hook.mjs src/main.ts'), { env: { A: '1', B_2: 'x' }, nodeArgs: ['--flag=3', '--import', './hook.mjs'], entry: 'src/main.ts' });
  assert.throws(() => parseStartScript('A="two words" node src/main.ts'), /shell syntax/);
  assert.throws(() => parseStartScript('tsx src/main.ts'), /not "\[NAME=value \.\.\.\] node/);
  const start = readStartScript(ROOT);
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const cmd = logicalLines(dockerfile).filter((line) => /^CMD\s/i.test(line.text)).at(-1)!.text;
  assert.deepEqual(JSON.parse(cmd.replace(/^CMD\s+/i, '')), ['node', ...start.nodeArgs, start.entry]);
  const image = dockerfileEnv(dockerfile);
  for (const [name, value] of Object.entries(start.env)) assert.equal(image[name], value, `the Dockerfile sets ENV ${name}=${value}`);
});
