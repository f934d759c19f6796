// A gateway killed (SIGKILL) after it broadcast a settlement but before it heard the receipt leaves a
// consistent ledger; the next start reconciles the payment from the chain, and a retry of the same proof
// gets the result it paid for. The chain runs in the test process so it outlives the gateway.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { postJson } from './support/service.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const BODY = { prompt: 'a ship in a storm', n: 1, size: '256x256' };

let chain: EvmSandbox;
let dataDir: string;
before(async () => {
  chain = await startEvmSandbox(NETWORKS.base as EvmNetwork);
  dataDir = mkdtempSync(join(tmpdir(), 'x402-crash-'));
});
after(async () => {
  await chain.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function startGateway(): Promise<ChildService> {
  const config = {
    logLevel: 'silent',
    settlementTimeoutMs: 60_000,
    reconcileIntervalMs: 200,
    networks: {
      base: {
        payTo: chain.payTo,
        asset: chain.asset,
        facilitator: { type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'BASE_SETTLEMENT_KEY' },
      },
    },
  };
  return startChildService(config, { BASE_SETTLEMENT_KEY: chain.settlementPrivateKey }, { dataDir });
}

async function pendingTransactions(): Promise<number> {
  const response = await postJson(chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'txpool_status', params: [] });
  const { result } = (await response.json()) as { result: { pending: string } };
  return Number(result.pending);
}

test('SIGKILL between broadcast and receipt: the next start settles the payment and delivers the result', async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address, 5_000_000n);
  const first = await startGateway();
  const quote = await postJson(`${first.url}/api/v1/ai/images`, BODY, { 'X-Network': 'base' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const proof = await signEvmProof(buyer, requirement, 8453);

  await chain.setAutomine(false);
  const inFlight = postJson(`${first.url}/api/v1/ai/images`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof }).catch(() => undefined);
  for (let i = 0; i < 200 && (await pendingTransactions()) === 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(await pendingTransactions(), 1, 'the settlement was broadcast');
  await first.kill();
  await inFlight;
  await chain.mine();
  await chain.setAutomine(true);
  assert.equal(await chain.balanceOf(buyer.address), 5_000_000n - BigInt(requirement.maxAmountRequired), 'the payment landed');

  const second = await startGateway();
  try {
    let delivered: Response | undefined;
    for (let i = 0; i < 50; i++) {
      delivered = await postJson(`${second.url}/api/v1/ai/images`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
      if (delivered.status !== 409) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(delivered!.status, 200);
    assert.equal(((await delivered!.json()) as { images: string[] }).images.length, 1);
    const receipt = JSON.parse(Buffer.from(delivered!.headers.get('x-payment-response')!, 'base64').toString());
    assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/, 'the settling transaction was found on-chain');
    assert.equal(await chain.balanceOf(buyer.address), 5_000_000n - BigInt(requirement.maxAmountRequired), 'charged once');
  } finally {
    await second.stop();
  }
});
