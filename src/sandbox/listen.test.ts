// Sandbox chains in a container: bound on every interface at fixed ports, known to buyers by the host's name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { localRpcUrl, publicRpcUrl } from './listen.ts';
import { startSandbox } from './sandbox.ts';

test('the URL the service uses and the one buyers get', () => {
  assert.equal(localRpcUrl({ host: '127.0.0.1', port: 0 }, 8545), 'http://127.0.0.1:8545');
  assert.equal(localRpcUrl({ host: '0.0.0.0', port: 8545 }, 8545), 'http://127.0.0.1:8545');
  assert.equal(localRpcUrl({ host: '::', port: 8545 }, 8545), 'http://[::1]:8545');
  assert.equal(localRpcUrl({ host: '::1', port: 0 }, 9000), 'http://[::1]:9000');
  assert.equal(publicRpcUrl({ host: '0.0.0.0', port: 8545 }, 8545), 'http://127.0.0.1:8545');
  assert.equal(publicRpcUrl({ host: '0.0.0.0', port: 8545, publicHost: 'gateway.example' }, 8545), 'http://gateway.example:8545');
  assert.equal(publicRpcUrl({ host: '0.0.0.0', port: 8545, publicHost: 'fd00::2' }, 8545), 'http://[fd00::2]:8545');
});

/** two consecutive ports free on 127.0.0.2 a moment ago */
async function freePortPair(): Promise<number> {
  const tryBind = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.2', () => server.close(() => resolve(true)));
    });
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * 40_000);
    if ((await tryBind(first)) && (await tryBind(first + 1))) return first;
  }
}

async function rpc(url: string, method: string): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) });
  return ((await response.json()) as { result?: unknown }).result;
}

// Tests bind loopback addresses only: 127.0.0.2 stands for the container's other interface (a wildcard's local
// URL is checked above, without binding it).
test('SANDBOX_HOST with a port base and a public host: chains on that address, /healthz names the public host', async (t) => {
  const portBase = await freePortPair();
  const sandbox = await startSandbox(['base', 'solana'], 30_000, { listen: { host: '127.0.0.2', portBase, publicHost: 'gateway.example' } });
  t.after(() => sandbox.stop());
  const health = sandbox.health() as { sandboxNetworks: Record<string, { rpcUrl: string }> };
  assert.equal(health.sandboxNetworks.base!.rpcUrl, `http://gateway.example:${portBase}`);
  assert.equal(health.sandboxNetworks.solana!.rpcUrl, `http://gateway.example:${portBase + 1}`);
  // the service itself reaches them on the address they listen on
  assert.equal(sandbox.chains.get('base')!.rpcUrl, `http://127.0.0.2:${portBase}`);
  assert.equal(await rpc(`http://127.0.0.2:${portBase}`, 'eth_chainId'), '0x2105');
  assert.equal(await rpc(`http://127.0.0.2:${portBase + 1}`, 'getHealth'), 'ok');
});

test('by default the chains listen on 127.0.0.1 only, and /healthz gives that address', async (t) => {
  const sandbox = await startSandbox(['base'], 30_000);
  t.after(() => sandbox.stop());
  const url = (sandbox.health() as { sandboxNetworks: Record<string, { rpcUrl: string }> }).sandboxNetworks.base!.rpcUrl;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(url, sandbox.chains.get('base')!.rpcUrl);
});
