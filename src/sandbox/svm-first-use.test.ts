// A Solana sandbox chain costs nothing until it is used: its keys and RPC port are there at startup, litesvm and
// @solana/kit are loaded at its first request (its faucet, its RPC, a payment), and a health probe wakes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registerHooks } from 'node:module';

// every module this process loads from here on
const loaded: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
const solanaRuntime = () => loaded.filter((url) => /\/node_modules\/(litesvm|@solana\/kit)\//.test(url));

const rpc = async (url: string, method: string, params: unknown[] = []) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) });
  return (await response.json()) as { id: number; result?: unknown; error?: unknown };
};

test('the runtime loads at the first real request, not at startup nor for a health probe', async () => {
  const { startSandbox } = await import('./sandbox.ts');
  const sandbox = await startSandbox(['solana-devnet'], 5_000);
  try {
    const chain = sandbox.chains.get('solana-devnet')!;
    assert.match(chain.payTo, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    assert.match(String(chain.rail.extra.feePayer), /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    assert.deepEqual(await rpc(chain.rpcUrl, 'getHealth'), { jsonrpc: '2.0', id: 7, result: 'ok' });
    assert.deepEqual(await chain.rail.facilitator.readinessProblems!(chain.payTo), []);
    assert.deepEqual(solanaRuntime(), [], 'nothing of litesvm or kit is loaded yet');

    // a wallet's first question opens the chain, with payTo's token account and the fee payer's SOL in place
    const balance = (await rpc(chain.rpcUrl, 'getBalance', [chain.rail.extra.feePayer])) as { result: { value: number } };
    assert.ok(balance.result.value >= 1_000_000_000);
    assert.ok(solanaRuntime().length > 0);
    assert.equal(await chain.balanceOf(chain.payTo), 0n);
    assert.deepEqual(await chain.rail.facilitator.readinessProblems!(chain.payTo), [], 'checked on the chain now: payTo can be paid');
  } finally {
    await sandbox.stop();
  }
});
