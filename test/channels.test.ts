// Payment channels (x402 `batch-settlement`), paid by the unmodified official client (@x402/fetch with
// @x402/evm's BatchSettlementEvmScheme) on the sandbox base chain: a deposit on the first call, vouchers after
// it (no transaction), the charge of each call in its receipt; the channel's state in the ledger; the
// corrective 402 when the client lost its state. Balances and transactions read on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementEvmScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { unusedPort } from './support/ports.ts';
import { sseData } from './support/sse.ts';
import { channelOf as channelOfRail, ESCROW_ABI } from './support/channels.ts';

const CHAT = { path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 64, options: { seed: 7 } } };
const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };
const SPEECH = { path: '/api/v1/ai/tts', body: { text: 'Hello world' } };
const OPENAI_CHAT = { path: '/v1/chat/completions', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 16 } };

// a chat model whose upstream is down: its work fails
const DOWN_CHAT = {
  id: 'down/chat',
  provider: 'down',
  upstreamModel: 'gone-1',
  capability: 'chat',
  maxTokens: 256,
  defaultMaxTokens: 64,
  price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
};

let service: RunningService;
before(async () => {
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: { down: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${await unusedPort()}/v1`, timeoutMs: 2_000, maxRetries: 0 } },
      models: [...embeddedModels(), DOWN_CHAT],
    },
  });
});
after(() => service.stop());

const rpcUrl = () => service.sandbox!.chains.get('base')!.rpcUrl;
const chain = () => createPublicClient({ transport: http(rpcUrl()) });

function channelClient(buyer: PrivateKeyAccount, deposit?: bigint) {
  const signer = toClientEvmSigner(buyer, chain());
  const scheme = new BatchSettlementEvmScheme(signer, deposit === undefined ? undefined : { depositStrategy: () => deposit.toString() });
  return new x402Client().register('eip155:8453', scheme);
}

async function pay(client: x402Client, endpoint: { path: string; body: unknown }) {
  const paying = wrapFetchWithPayment(fetch, client);
  return paying(`${service.url}${endpoint.path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
    body: JSON.stringify(endpoint.body),
  });
}

/** The chain's height: a paid call that sends no transaction leaves it where it was (anvil mines one block per transaction). */
async function blockNumber(): Promise<bigint> {
  return chain().getBlockNumber();
}

test('the 402 offers batch-settlement beside exact, with the receiver authorizer, withdraw delay and token domain', async () => {
  const response = await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  const v1 = (await response.json()) as { accepts: { scheme: string }[] };
  assert.deepEqual(v1.accepts.map((a) => a.scheme), ['exact'], 'the v1 body is unchanged: channels exist only in v2');
  const v2 = decode(response.headers.get('PAYMENT-REQUIRED'));
  const schemes = v2.accepts.map((a: { scheme: string }) => a.scheme);
  assert.deepEqual(schemes, ['exact', 'batch-settlement', 'auth-capture']);
  const [exact, channel] = v2.accepts;
  assert.equal(channel.amount, exact.amount, 'the per-request ceiling is the quote');
  assert.equal(channel.payTo, exact.payTo);
  assert.match(channel.extra.receiverAuthorizer, /^0x[0-9a-fA-F]{40}$/);
  assert.equal(channel.extra.withdrawDelay, 900);
  assert.equal(channel.extra.name, exact.extra.name);
  assert.equal(channel.extra.version, exact.extra.version);
});

test('the official client deposits once, then pays by vouchers alone; receipts carry each charge', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const client = channelClient(buyer, 5_000_000n);
  const before = await balanceOf(service, 'base', buyer.address);

  const first = await pay(client, IMAGE);
  assert.equal(first.status, 200, await first.clone().text());
  const deposit = decode(first.headers.get('PAYMENT-RESPONSE'));
  assert.equal(deposit.success, true);
  assert.match(deposit.transaction, /^0x[0-9a-f]{64}$/, 'the first call carries the deposit transaction');
  assert.equal(deposit.amount, '5000000');
  const price = BigInt(deposit.extra.chargedAmount);
  assert.ok(price > 0n);
  assert.equal(first.headers.get('X-Payment-Amount'), price.toString());
  const receipt = await chain().getTransactionReceipt({ hash: deposit.transaction as Hex });
  assert.equal(receipt.status, 'success');
  assert.equal(await balanceOf(service, 'base', buyer.address), before - 5_000_000n, 'the deposit left the payer');

  const startBlock = await blockNumber();
  let charged = price;
  for (const endpoint of [IMAGE, SPEECH, CHAT, OPENAI_CHAT, IMAGE]) {
    const response = await pay(client, endpoint);
    assert.equal(response.status, 200, `${endpoint.path}: ${await response.clone().text()}`);
    const paid = decode(response.headers.get('PAYMENT-RESPONSE'));
    assert.equal(paid.transaction, '', 'a voucher sends no transaction');
    assert.equal(paid.amount, '');
    charged += BigInt(paid.extra.chargedAmount);
    assert.equal(paid.extra.channelState.chargedCumulativeAmount, charged.toString());
    await response.arrayBuffer();
  }
  assert.equal(await blockNumber(), startBlock, 'no transaction for the voucher calls');

  // the ledger holds the channel: what was charged and the latest voucher, mirrored escrow balance
  const { channelId } = channelOf(buyer);
  const record = await service.ledger.channels!.get(channelId);
  assert.ok(record);
  assert.equal(record.chargedCumulative, charged);
  assert.ok(record.signedMaxClaimable >= charged);
  assert.equal(record.balance, 5_000_000n);
  const [onChainBalance, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'channels', args: [channelId as Hex] });
  assert.equal(onChainBalance, 5_000_000n);
  assert.equal(totalClaimed, 0n);
});

test('metered chat is charged its tokens, at most the ceiling the voucher signed', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const client = channelClient(buyer, 2_000_000n);
  const quote = decode((await postJson(`${service.url}${CHAT.path}`, { ...CHAT.body, max_tokens: 512 }, { 'X-Network': 'base' })).headers.get('PAYMENT-REQUIRED'));
  const ceiling = BigInt(quote.accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement').amount);
  const response = await pay(client, { path: CHAT.path, body: { ...CHAT.body, max_tokens: 512 } });
  assert.equal(response.status, 200, await response.clone().text());
  const paid = decode(response.headers.get('PAYMENT-RESPONSE'));
  const charged = BigInt(paid.extra.chargedAmount);
  assert.ok(charged > 0n && charged < ceiling, `charged ${charged} below the ceiling ${ceiling}`);
});

test('a client that lost its state is resynchronised by the corrective 402 and pays on', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const first = channelClient(buyer, 3_000_000n);
  assert.equal((await pay(first, IMAGE)).status, 200);
  assert.equal((await pay(first, SPEECH)).status, 200);
  // a new client for the same payer: it recovers the channel from the escrow (charged = totalClaimed = 0), signs
  // too low a voucher, gets the corrective 402 with the server's signed state, checks it and pays
  const fresh = channelClient(buyer, 3_000_000n);
  const startBlock = await blockNumber();
  const response = await pay(fresh, IMAGE);
  assert.equal(response.status, 200, await response.clone().text());
  const paid = decode(response.headers.get('PAYMENT-RESPONSE'));
  assert.equal(paid.transaction, '');
  assert.equal(await blockNumber(), startBlock, 'no second deposit');
});

test('a stale voucher (a replayed lower cumulative) gets the corrective 402 with the signed voucher state', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const client = channelClient(buyer, 3_000_000n);
  let replayed: string | undefined;
  const recording: typeof fetch = async (input, init) => {
    // the client hands over Request objects (not always of this realm's class): read their headers
    const headers = typeof input === 'object' && 'headers' in input ? input.headers : new Headers(init?.headers);
    const signature = headers.get('PAYMENT-SIGNATURE');
    if (signature && decode(signature).payload.type === 'voucher') replayed ??= signature;
    return fetch(input, init);
  };
  const paying = wrapFetchWithPayment(recording, client);
  const call = () =>
    paying(`${service.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  assert.equal((await call()).status, 200);
  assert.equal((await call()).status, 200);
  assert.equal((await call()).status, 200);
  assert.ok(replayed);
  const again = await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, { 'X-Network': 'base', 'PAYMENT-SIGNATURE': replayed });
  assert.equal(again.status, 402);
  const required = decode(again.headers.get('PAYMENT-REQUIRED'));
  assert.equal(required.error, 'invalid_batch_settlement_evm_cumulative_amount_mismatch');
  const channel = required.accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
  assert.ok(BigInt(channel.extra.channelState.chargedCumulativeAmount) > 0n);
  assert.match(channel.extra.voucherState.signature, /^0x/);
  assert.ok(BigInt(channel.extra.voucherState.signedMaxClaimable) >= BigInt(channel.extra.channelState.chargedCumulativeAmount));
});

/** The channel's id and config as the official client builds them for this gateway. */
const channelOf = (buyer: PrivateKeyAccount, overrides: { salt?: Hex } = {}) => channelOfRail(service.rails.get('base')!, buyer.address, overrides);

test('work that fails charges nothing and leaves the channel as it was; the same voucher then pays', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const client = channelClient(buyer, 2_000_000n);
  assert.equal((await pay(client, IMAGE)).status, 200);
  const { channelId } = channelOf(buyer);
  const before = (await service.ledger.channels!.get(channelId))!;

  const failed = await pay(client, { path: CHAT.path, body: { model: 'down/chat', prompt: 'Tell me about the sea', max_tokens: 64 } });
  assert.ok(failed.status >= 500, `the work failed: ${failed.status} ${await failed.clone().text()}`);
  const after = (await service.ledger.channels!.get(channelId))!;
  assert.deepEqual(
    [after.chargedCumulative, after.signedMaxClaimable, after.signature],
    [before.chargedCumulative, before.signedMaxClaimable, before.signature],
    'nothing charged, the previous voucher kept',
  );
  // the client did not count it either: its next voucher matches
  const next = await pay(client, SPEECH);
  assert.equal(next.status, 200, await next.clone().text());
});

test('tampered vouchers are refused and move nothing: amount, channel id, signer, and a config of another hash', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const client = channelClient(buyer, 2_000_000n);
  assert.equal((await pay(client, IMAGE)).status, 200);
  const { config, channelId } = channelOf(buyer);
  const before = (await service.ledger.channels!.get(channelId))!;
  const quote = await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, { 'X-Network': 'base' });
  const accepted = decode(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
  const next = before.chargedCumulative + BigInt(accepted.amount);
  const signer = toClientEvmSigner(buyer, chain());
  const good = await signVoucher(signer, channelId, next.toString(), 'eip155:8453');
  const send = (payload: Record<string, unknown>) =>
    postJson(`${service.url}${IMAGE.path}`, IMAGE.body, {
      'X-Network': 'base',
      'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload })).toString('base64'),
    });
  const startBlock = await blockNumber();
  const cases: [string, Record<string, unknown>, RegExp][] = [
    // the amount raised after signing: the signature no longer covers it (and the ceiling is off)
    ['amount', { type: 'voucher', channelConfig: config, voucher: { ...good, maxClaimableAmount: (next + 1n).toString() } }, /cumulative_amount_mismatch|voucher_signature/],
    // the signature of the amount the server expects, but bound to the voucher of another channel
    ['channel id', { type: 'voucher', channelConfig: config, voucher: { ...good, channelId: channelOf(buyer, { salt: `0x${'11'.repeat(32)}` }).channelId } }, /channel_id_mismatch/],
    // signed by someone else
    ['signer', { type: 'voucher', channelConfig: config, voucher: await signVoucher(toClientEvmSigner(privateKeyToAccount(generatePrivateKey())), channelId, next.toString(), 'eip155:8453') }, /voucher_signature/],
    // a config that is not the one the id hashes (a longer withdraw delay, same id)
    ['config', { type: 'voucher', channelConfig: { ...config, withdrawDelay: 86_400 }, voucher: good }, /channel_id_mismatch/],
  ];
  for (const [what, payload, reason] of cases) {
    const response = await send(payload);
    assert.equal(response.status, 402, what);
    assert.match(decode(response.headers.get('PAYMENT-REQUIRED')).error, reason, what);
  }
  const after = (await service.ledger.channels!.get(channelId))!;
  assert.equal(after.chargedCumulative, before.chargedCumulative, 'nothing charged');
  assert.equal(await blockNumber(), startBlock, 'nothing sent');
  // and the genuine voucher still pays
  const genuine = await send({ type: 'voucher', channelConfig: config, voucher: good });
  assert.equal(genuine.status, 200, await genuine.clone().text());
});

test("a streamed call's last-event receipt states what PAYMENT-RESPONSE states: the deposit's amount, the charge in extra", async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const client = channelClient(buyer, 3_000_000n);
  // the stream opens the channel: its deposit rides on it, and its receipt is in the last event only
  const streamed = await pay(client, { path: CHAT.path, body: { ...CHAT.body, stream: true } });
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers.get('PAYMENT-RESPONSE'), null, 'a live stream has no receipt header');
  let receipt: any;
  for await (const data of sseData(streamed)) if (data !== '[DONE]') receipt = (JSON.parse(data) as { x402?: unknown }).x402 ?? receipt;
  assert.ok(receipt, 'the last event carries the receipt');
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(receipt.amount, '3000000', "the receipt's amount is the deposit's, as the header's is");
  const charged = BigInt(receipt.extra.chargedAmount);
  assert.ok(charged > 0n);
  assert.equal(receipt.extra.channelState.chargedCumulativeAmount, charged.toString());

  // the same fields in the header of a call that is not streamed (one that deposits, and one by voucher)
  const other = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const plainClient = channelClient(other, 3_000_000n);
  const plain = decode((await pay(plainClient, CHAT)).headers.get('PAYMENT-RESPONSE'));
  assert.deepEqual([plain.amount, Object.keys(plain.extra).sort()], ['3000000', Object.keys(receipt.extra).sort()]);
  const voucherStream = await pay(plainClient, { path: CHAT.path, body: { ...CHAT.body, stream: true } });
  let voucherReceipt: any;
  for await (const data of sseData(voucherStream)) if (data !== '[DONE]') voucherReceipt = (JSON.parse(data) as { x402?: unknown }).x402 ?? voucherReceipt;
  assert.deepEqual([voucherReceipt.transaction, voucherReceipt.amount], ['', ''], 'a voucher: no transaction, no amount of its own');
  assert.ok(BigInt(voucherReceipt.extra.chargedAmount) > 0n);
});
