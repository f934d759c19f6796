// payment-identifier: a client's id stands for a payment only while that payment stands. A funded wallet whose
// proof verifies under someone else's id and which is then never charged (it leaves its stream early, or its
// proof expires before settlement) must not keep the id: the payer the id belongs to is then served under it,
// charged exactly once, and the squatter is charged nothing (balances read on-chain, the sandbox anvil).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { startTestService, postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { balanceOf } from './support/sandbox-wallet.ts';
import { CHAT_PATH, CHAT_TEXT, OpenAIUpstream, upstreamChatConfig } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';

const CHAT = { model: 'up/chat', messages: [{ role: 'user', content: 'Tell me about the sea' }], max_tokens: 16 };
let upstream: OpenAIUpstream;
let service: RunningService;

before(async () => {
  upstream = await new OpenAIUpstream().start();
  service = await startTestService({
    config: upstreamChatConfig(upstream.baseURL, { timeoutMs: 30_000 }),
  });
});

after(async () => {
  await service?.stop();
  await upstream?.close();
});

async function fundedBuyer(): Promise<PrivateKeyAccount> {
  const buyer = privateKeyToAccount(generatePrivateKey());
  assert.equal((await postJson(`${service.url}/sandbox/faucet`, { network: 'base', address: buyer.address })).status, 200);
  return buyer;
}

/** A v2 PAYMENT-SIGNATURE for `body` by `buyer`, carrying the payment-identifier `id`. */
async function paymentWithId(buyer: PrivateKeyAccount, body: unknown, id: string, validBefore?: bigint): Promise<string> {
  const quote = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const v1 = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const v2 = JSON.parse(Buffer.from(quote.headers.get('PAYMENT-REQUIRED')!, 'base64').toString()) as { accepts: unknown[] };
  const signed = JSON.parse(Buffer.from(await signEvmProof(buyer, v1, 8453, validBefore ? { validBefore } : {}), 'base64').toString());
  const payment = { x402Version: 2, accepted: v2.accepts[0], payload: signed.payload, extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id } } } };
  return Buffer.from(JSON.stringify(payment)).toString('base64');
}

const stateOf = async (payer: string) => (await service.ledger.listPayments({ payer }, 5)).payments[0]?.state;

/** The id's owner pays under it once the squatter's payment is released: 200 and charged once; the squatter nothing. */
async function ownerIsServed(id: string, squatter: PrivateKeyAccount): Promise<void> {
  const owner = await fundedBuyer();
  const before = await balanceOf(service, 'base', owner.address);
  upstream.reset();
  const served = await postJson(`${service.url}/v1/chat/completions`, CHAT, { 'PAYMENT-SIGNATURE': await paymentWithId(owner, CHAT, id) });
  assert.equal(served.status, 200, (await served.clone().text()).slice(0, 300));
  assert.equal(((await served.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, CHAT_TEXT);
  assert.equal(await balanceOf(service, 'base', owner.address), before - 1000n, 'the owner is charged exactly once');
  assert.equal(await balanceOf(service, 'base', squatter.address), 100_000_000n, 'the squatter is charged nothing');
}

test('a squatter that leaves its stream early does not keep the id', async () => {
  const id = generatePaymentId();
  const squatter = await fundedBuyer();
  const streamed = { ...CHAT, stream: true };
  upstream.reset();
  upstream.fail(CHAT_PATH, { kind: 'stream-hold', afterChunks: 2 });
  const response = await postJson(`${service.url}/v1/chat/completions`, streamed, { 'PAYMENT-SIGNATURE': await paymentWithId(squatter, streamed, id) });
  assert.equal(response.status, 200);
  const events = sseData(response);
  await events.next(); // the first event, then the squatter hangs up
  await events.return(undefined);
  await until('the gateway to end the stream upstream', () => upstream.streamsClosedEarly === 1);
  await until('the squatter\'s payment to be released', async () => (await stateOf(squatter.address)) === 'released');

  await ownerIsServed(id, squatter);
});

test('a squatter whose proof expires before settlement does not keep the id', async () => {
  const id = generatePaymentId();
  const squatter = await fundedBuyer();
  // valid long enough to verify (6 s of it must be left), not to settle after a held generation
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 8);
  const header = await paymentWithId(squatter, CHAT, id, validBefore);
  upstream.reset();
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const answering = postJson(`${service.url}/v1/chat/completions`, CHAT, { 'PAYMENT-SIGNATURE': header });
  await until('the paid work to be running', () => upstream.received(CHAT_PATH).length === 1);
  // until the proof is too close to its end to settle (6 s of it must be left then too)
  await sleep(Math.max(0, (Number(validBefore) - 5) * 1000 - Date.now() + 100));
  upstream.release();
  const refused = await answering;
  assert.equal(refused.status, 402, 'its settlement failed: nothing charged, result withheld');
  await refused.arrayBuffer();
  assert.equal(await stateOf(squatter.address), 'failed');

  await ownerIsServed(id, squatter);
});
