// Metered chat through x402 `upto`, paid by the unmodified official client (@x402/fetch with @x402/evm's
// UptoEvmScheme) on the sandbox base chain: the real Permit2 and the upto proxy, real signatures, balances
// read on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, createTestClient, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

// a short answer under a large budget: the ceiling is priced on max_tokens, the charge on what was generated
const CHAT = { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 128, options: { seed: 7 } };
const CHAT_URL = '/api/v1/ai/chat';
const json = { 'Content-Type': 'application/json' };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
});
after(() => service.stop());

const rpcUrl = () => service.sandbox!.chains.get('base')!.rpcUrl;
const payTo = () => service.rails.get('base')!.payTo;

function uptoClient(buyer: PrivateKeyAccount) {
  const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl()) }));
  return new x402Client().register('eip155:8453', new UptoEvmScheme(signer, { rpcUrl: rpcUrl() }));
}

async function payChat(client: x402Client, body: unknown = CHAT) {
  const pay = wrapFetchWithPayment(fetch, client);
  return pay(`${service.url}${CHAT_URL}`, { method: 'POST', headers: { ...json, 'X-Network': 'base' }, body: JSON.stringify(body) });
}

test('the 402 offers upto beside exact for chat on base (v2 only), with the facilitator and gas sponsoring', async () => {
  const response = await postJson(`${service.url}${CHAT_URL}`, CHAT, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  const v1 = (await response.json()) as { accepts: { scheme: string }[] };
  assert.deepEqual(v1.accepts.map((a) => a.scheme), ['exact'], 'the v1 body is unchanged: upto exists only in v2');
  const v2 = decode(response.headers.get('PAYMENT-REQUIRED'));
  assert.deepEqual(v2.accepts.map((a: { scheme: string }) => a.scheme), ['exact', 'upto', 'batch-settlement', 'auth-capture']);
  const [exact, upto] = v2.accepts;
  assert.equal(upto.amount, exact.amount, 'the ceiling is the exact quote');
  assert.equal(upto.extra.assetTransferMethod, 'permit2');
  assert.match(upto.extra.facilitatorAddress, /^0x[0-9a-fA-F]{40}$/);
  assert.ok(v2.extensions.eip2612GasSponsoring && v2.extensions.erc20ApprovalGasSponsoring);

  const solana = decode((await postJson(`${service.url}${CHAT_URL}`, CHAT, { 'X-Network': 'solana' })).headers.get('PAYMENT-REQUIRED'));
  assert.deepEqual(solana.accepts.map((a: { scheme: string }) => a.scheme), ['exact'], 'Solana stays exact');
  const image = decode(
    (await postJson(`${service.url}/api/v1/ai/images`, { prompt: 'a fox' }, { 'X-Network': 'base' })).headers.get('PAYMENT-REQUIRED'),
  );
  assert.deepEqual(image.accepts.map((a: { scheme: string }) => a.scheme), ['exact', 'batch-settlement', 'auth-capture'], 'only chat is metered');
});

test('a short answer under a large max_tokens is charged for its tokens: below the ceiling, on-chain exactly, once', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const quote = decode((await postJson(`${service.url}${CHAT_URL}`, CHAT, { 'X-Network': 'base' })).headers.get('PAYMENT-REQUIRED'));
  const ceiling = BigInt(quote.accepts[1].amount);
  const [buyerBefore, payToBefore] = [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo())];

  const response = await payChat(uptoClient(buyer));
  assert.equal(response.status, 200, await response.clone().text());
  const body = (await response.json()) as { response: string; usage: { tokens: number } };
  assert.ok(body.response.length > 0);
  const receipt = decode(response.headers.get('PAYMENT-RESPONSE'));
  assert.equal(receipt.success, true);
  assert.equal(receipt.network, 'eip155:8453');
  const charged = BigInt(receipt.amount);
  assert.ok(charged > 0n && charged < ceiling, `charged ${charged} below the ceiling ${ceiling}`);
  assert.equal(response.headers.get('X-Payment-Amount'), charged.toString());
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);

  assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - charged);
  assert.equal(await balanceOf(service, 'base', payTo()), payToBefore + charged);

  // the same proof again: the stored answer with its receipt, and nothing moves
  const proof = await lastProof(buyer);
  const replay = await fetch(`${service.url}${CHAT_URL}`, {
    method: 'POST',
    headers: { ...json, 'PAYMENT-SIGNATURE': proof.header },
    body: JSON.stringify(CHAT),
  });
  assert.equal(replay.status, 200);
  await replay.arrayBuffer();
  assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - charged - proof.charged);
  assert.equal(BigInt(decode(replay.headers.get('PAYMENT-RESPONSE')).amount), proof.charged);
});

/** Pays once more, keeping the PAYMENT-SIGNATURE the client sent, and returns it with what it was charged. */
async function lastProof(buyer: PrivateKeyAccount): Promise<{ header: string; charged: bigint }> {
  let header = '';
  const capture: typeof fetch = async (input, init) => {
    const sent = new Headers(init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined)).get('PAYMENT-SIGNATURE');
    if (sent) header = sent;
    return fetch(input, init);
  };
  const response = await wrapFetchWithPayment(capture, uptoClient(buyer))(`${service.url}${CHAT_URL}`, {
    method: 'POST',
    headers: { ...json, 'X-Network': 'base' },
    body: JSON.stringify(CHAT),
  });
  assert.equal(response.status, 200);
  await response.arrayBuffer();
  return { header, charged: BigInt(decode(response.headers.get('PAYMENT-RESPONSE')).amount) };
}

test('a buyer holding USDC and no ETH pays (gas sponsored through its EIP-2612 permit)', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  await createTestClient({ transport: http(rpcUrl()), mode: 'anvil' }).setBalance({ address: buyer.address, value: 0n });
  const before = await balanceOf(service, 'base', buyer.address);
  const response = await payChat(uptoClient(buyer));
  assert.equal(response.status, 200, await response.clone().text());
  const charged = BigInt(decode(response.headers.get('PAYMENT-RESPONSE')).amount);
  assert.equal(await balanceOf(service, 'base', buyer.address), before - charged);
  assert.equal(await createPublicClient({ transport: http(rpcUrl()) }).getBalance({ address: buyer.address }), 0n, 'no ETH needed');
});

test('the same call under exact is charged the whole ceiling', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const response = await payChat(registerExactEvmScheme(new x402Client(), { signer: buyer }));
  assert.equal(response.status, 200, await response.clone().text());
  const quote = decode((await postJson(`${service.url}${CHAT_URL}`, CHAT, { 'X-Network': 'base' })).headers.get('PAYMENT-REQUIRED'));
  assert.equal(await balanceOf(service, 'base', buyer.address), before - BigInt(quote.accepts[0].amount));
});
