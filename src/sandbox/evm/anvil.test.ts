import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { startAnvil } from './anvil.ts';

async function rpc(rpcUrl: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

async function answers(rpcUrl: string): Promise<boolean> {
  try {
    await rpc(rpcUrl, 'eth_chainId');
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

test('anvil starts on 127.0.0.1 with the requested chain id, and stop() kills it', async (t) => {
  const node = await startAnvil({ chainId: 84532 });
  t.after(() => node.stop());

  assert.match(node.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(await rpc(node.rpcUrl, 'eth_chainId'), '0x14a34'); // 84532
  assert.deepEqual(await rpc(node.rpcUrl, 'eth_accounts'), [], 'no well-known funded dev accounts');

  await node.stop();
  assert.equal(await answers(node.rpcUrl), false);
  await node.stop(); // idempotent
});

test('anvil dies with its parent, even when the parent is killed with SIGKILL', async (t) => {
  const script = `
    import { startAnvil } from ${JSON.stringify(new URL('./anvil.ts', import.meta.url).href)};
    const node = await startAnvil({ chainId: 8453 });
    console.log(node.rpcUrl);
    setInterval(() => {}, 1000); // stay alive until killed
  `;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => parent.kill('SIGKILL'));

  const [line] = (await once(parent.stdout, 'data')) as [Buffer];
  const rpcUrl = line.toString().trim();
  assert.equal(await answers(rpcUrl), true);

  parent.kill('SIGKILL');
  await once(parent, 'exit');
  assert.equal(await until(async () => !(await answers(rpcUrl)), 5_000), true, 'anvil outlived its parent');
});

test('a port already taken is named in the error', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => holder.close(resolve)));
  const { port } = holder.address() as AddressInfo;
  await assert.rejects(startAnvil({ chainId: 8453, listen: { host: '127.0.0.1', port } }), (error: Error) => {
    assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
    assert.match(error.message, new RegExp(`port ${port} is already in use`));
    return true;
  });
});
