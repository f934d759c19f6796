// Sandbox state survives a restart (docs/sandbox.md): the chains' balances and contracts and the operator's keys
// are kept under DATA_DIR/sandbox/, so a gateway started again on the same data dir has the same payTo, the test
// USDC a buyer was given, and still takes payments; deleting that folder resets it all. Real anvil and litesvm.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config/load.ts';
import { startService, type RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { generateSvmKeypair } from '../src/sandbox/svm/keypair.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'x402-sandbox-restart-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const start = () => startService(loadConfig({}, { host: '127.0.0.1', port: 0, dataDir, logLevel: 'silent', sandbox: { enabled: true, networks: ['base', 'solana'] } }));

async function balance(service: RunningService, network: string, address: string): Promise<bigint> {
  const response = await fetch(`${service.url}/sandbox/balance?network=${network}&address=${address}`);
  return BigInt(((await response.json()) as { balance: string }).balance);
}

/** each sandbox network's operator (its payTo), from /healthz */
async function payTo(service: RunningService): Promise<Record<string, string>> {
  const { sandboxNetworks } = (await (await fetch(`${service.url}/healthz`)).json()) as { sandboxNetworks: Record<string, { payTo: string }> };
  return Object.fromEntries(Object.entries(sandboxNetworks).map(([network, chain]) => [network, chain.payTo]));
}

test('balances, contracts and keys are kept across a restart; deleting DATA_DIR/sandbox resets them', async () => {
  const evmBuyer = privateKeyToAccount(generatePrivateKey());
  const solanaBuyer = (await generateSvmKeypair()).address;
  let service = await start();
  const operators = await payTo(service);
  assert.equal((await postJson(`${service.url}/sandbox/faucet`, { network: 'base', address: evmBuyer.address, amount: '7000000' })).status, 200);
  assert.equal((await postJson(`${service.url}/sandbox/faucet`, { network: 'solana', address: solanaBuyer, amount: '9000000' })).status, 200);
  await service.stop(); // right away: the stop waits for the chains' state to be written

  service = await start();
  try {
    assert.deepEqual(await payTo(service), operators, 'the same operator keys');
    assert.equal(await balance(service, 'base', evmBuyer.address), 7_000_000n);
    assert.equal(await balance(service, 'solana', solanaBuyer), 9_000_000n);
    // and the resumed chain takes a payment, settled on-chain
    const body = { model: 'local/demo-bigram', prompt: 'Hello again', max_tokens: 4 };
    const quote = await postJson(`${service.url}/api/v1/ai/chat`, body, { 'X-Network': 'base' });
    const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    const paid = await postJson(`${service.url}/api/v1/ai/chat`, body, { 'X-Network': 'base', 'X-PAYMENT': await signEvmProof(evmBuyer, requirement, 8453) });
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.equal(await balance(service, 'base', evmBuyer.address), 7_000_000n - BigInt(requirement.maxAmountRequired));
  } finally {
    await service.stop();
  }

  rmSync(join(dataDir, 'sandbox'), { recursive: true, force: true });
  service = await start();
  try {
    assert.notDeepEqual(await payTo(service), operators, 'reset: new operator keys');
    assert.equal(await balance(service, 'base', evmBuyer.address), 0n);
    assert.equal(await balance(service, 'solana', solanaBuyer), 0n);
  } finally {
    await service.stop();
  }
});
