// A payment-channel voucher pays once, ledger retention or not. A metered call (chat, charged its tokens) is charged less than the ceiling
// its voucher signed, so a later call's price can meet an earlier voucher's ceiling exactly. That voucher, sent
// again by anyone who read it (a claim puts it on chain; the channel's charged amount is public), must not pay for a
// second call on the payer's channel. Paid by the unmodified official client on the sandbox base chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, postJson } from './support/service.ts';
import { fundedEvmBuyer, decodeHeader } from './support/sandbox-wallet.ts';
import { officialChannelPayer } from './support/channels.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import type { RunningService } from '../src/service.ts';

const CHAT = '/api/v1/ai/chat';
// one unit per prompt character, so that a request of any price a few units apart can be written
const PRICE = { perRequest: '1', perThousandOutputTokens: '20000', perThousandInputChars: '1000' };

let service: RunningService;
before(async () => {
  const models = embeddedModels().map((model) => (model.capability === 'chat' ? { ...model, price: PRICE } : model));
  service = await startTestService({ networks: ['base'], config: { models } });
});
after(() => service.stop());

const channelPrice = async (body: unknown): Promise<bigint> => {
  const quote = await postJson(`${service.url}${CHAT}`, body, { 'X-Network': 'base' });
  return BigInt(decodeHeader(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement').amount);
};

test('an earlier voucher whose ceiling a later price meets is refused, by anyone, and charges nothing', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const headers = typeof input === 'object' && 'headers' in input ? input.headers : new Headers(init?.headers);
    const signature = headers.get('PAYMENT-SIGNATURE');
    if (signature) sent.push(signature);
    return fetch(input, init);
  };
  const payer = officialChannelPayer(buyer, service.sandbox!.chains.get('base')!.rpcUrl, 2_000_000n, recording);
  // a large ceiling charged its tokens only, then a small call
  assert.equal((await payer.pay(service.url, { path: CHAT, body: { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 512 } })).status, 200);
  const first = decodeHeader(sent.at(-1)!);
  assert.equal((await payer.pay(service.url, { path: CHAT, body: { model: 'local/demo-bigram', prompt: 'Hi', max_tokens: 8 } })).status, 200);

  // someone without keys: the channel's charged amount is public; a prompt the right length prices a call at the rest
  const channelId = first.payload.voucher.channelId as string;
  const charged = async () => BigInt(((await (await fetch(`${service.url}/api/v1/payments/${channelId}`)).json()) as { charged: string }).charged);
  const before = await charged();
  const target = BigInt(first.payload.voucher.maxClaimableAmount) - before;
  const body = (length: number) => ({ model: 'local/demo-bigram', prompt: 'x'.repeat(length), max_tokens: 1 });
  const length = 1 + Number(target - (await channelPrice(body(1))));
  assert.equal(await channelPrice(body(length)), target, 'a request priced at the rest of the first ceiling');
  const replay = { ...first, accepted: { ...first.accepted, amount: target.toString() }, payload: { type: 'voucher', channelConfig: first.payload.channelConfig, voucher: first.payload.voucher } };
  const sendAgain = () => postJson(`${service.url}${CHAT}`, body(length), { 'X-Network': 'base', 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(replay)).toString('base64') });
  const again = await sendAgain();
  assert.equal(again.status, 402);
  assert.equal(decodeHeader(again.headers.get('PAYMENT-REQUIRED')).error, 'invalid_batch_settlement_evm_voucher_already_used');
  assert.equal(await charged(), before, 'nothing charged to the payer');

  // ledger retention past every charge: a charge whose ceiling is above what the channel charged stays (it tells the voucher was used)
  await service.ledger.channels!.pruneCharges(new Date(Date.now() + 86_400_000), 1_000);
  assert.ok(await service.ledger.channels!.chargeAt(channelId, BigInt(first.payload.voucher.maxClaimableAmount)));
  const afterRetention = await sendAgain();
  assert.equal(afterRetention.status, 402);
  assert.equal(decodeHeader(afterRetention.headers.get('PAYMENT-REQUIRED')).error, 'invalid_batch_settlement_evm_voucher_already_used');
  assert.equal(await charged(), before, 'nothing charged to the payer after retention either');

  // the payer pays on with the official client
  assert.equal((await payer.pay(service.url, { path: CHAT, body: { model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 8 } })).status, 200);
});
