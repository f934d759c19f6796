// Off-the-shelf x402 clients send no X-Network. With EVM and Solana networks both enabled, the 402 then
// offers every network, and the unmodified x402-fetch 1.x must still pay, on the chain of its own wallet:
// a viem account (which names no chain, so the client takes the first USDC requirement offered) and a
// Solana signer (which the client filters to Solana networks). Charged exactly once, where it paid.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment } from 'x402-fetch';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer, fundedSolanaBuyer } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

const PATH = '/api/v1/ai/tts';
const BODY = { text: 'No network named, paid all the same.' };
const request = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(BODY) };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['solana', 'base', 'polygon'] });
});
after(() => service.stop());

async function price(network: string): Promise<bigint> {
  const response = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': network });
  return BigInt(((await response.json()) as { accepts: { maxAmountRequired: string }[] }).accepts[0]!.maxAmountRequired);
}

test('x402-fetch 1.x with a viem account and no X-Network pays on an EVM network', async () => {
  const buyer = await fundedEvmBuyer(service, ['base', 'polygon']);
  const response = await wrapFetchWithPayment(fetch, buyer)(`${service.url}${PATH}`, request);
  assert.equal(response.status, 200, await response.clone().text());
  const receipt = decodeReceipt(response.headers.get('x-payment-response'));
  assert.equal(receipt.network, 'base', 'the first EVM network offered');
  assert.equal(await balanceOf(service, 'base', buyer.address), 10_000_000n - (await price('base')));
  assert.equal(await balanceOf(service, 'polygon', buyer.address), 10_000_000n, 'nothing moved elsewhere');
});

test('x402-fetch 1.x with a Solana signer and no X-Network pays on Solana', async () => {
  const buyer = await fundedSolanaBuyer(service, ['solana'], 5_000_000n);
  const rpcUrl = service.sandbox!.chains.get('solana')!.rpcUrl;
  const response = await wrapFetchWithPayment(fetch, buyer as never, undefined, undefined, { svmConfig: { rpcUrl } })(`${service.url}${PATH}`, request);
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(decodeReceipt(response.headers.get('x-payment-response')).network, 'solana');
  assert.equal(await balanceOf(service, 'solana', buyer.address), 5_000_000n - (await price('solana')));
});
