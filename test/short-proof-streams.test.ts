// A streamed answer is never delivered in full unless its payment can still settle (src/payments/stream-validity.ts).
// The attack it closes: a proof that expires a few seconds ahead, a stream that lasts longer, every token
// delivered, then a settlement that fails on the expired authorization and nothing charged. Here the upstream
// model takes longer to answer than the proof is valid (or holds its stream open, as a slow model would):
// - exact with a short validBefore (both chat routes): settled before the first byte, so the whole answer
//   arrives after the proof expired and is still paid, once;
// - exact on Solana, whose blockhash expiry the gateway does not know: settled before the first byte too;
// - upto with a short Permit2 deadline: the stream stops before the deadline, as if its token limit were
//   reached, and the words delivered by then are charged (not a tool call it cut short);
// - upto with a deadline too short for any answer: refused up front, nothing moves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { x402Client } from '@x402/fetch';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, fundedSolanaBuyer } from './support/sandbox-wallet.ts';
import { quoteFor } from './support/paid-call.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_PATH, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

const BASE = NETWORKS.base as EvmNetwork;
const UP_CHAT = 'up/chat';
const UP_PRICE = { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' };
const PROMPT = 'Tell me about the sea';
const SPEC_STREAM = { model: UP_CHAT, prompt: PROMPT, stream: true };
const V1_STREAM = { model: UP_CHAT, messages: [{ role: 'user', content: PROMPT }], stream: true };

let upstream: OpenAIUpstream;
let service: RunningService;
before(async () => {
  upstream = await startOpenAIUpstream();
  service = await startTestService({
    networks: ['base', 'solana-devnet'],
    config: {
      // a stream may last up to 30 s: any proof valid for less than 45 s more is short
      providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL, timeoutMs: 30_000, maxRetries: 0 } },
      models: [
        ...embeddedModels(),
        { id: UP_CHAT, provider: 'mock', upstreamModel: 'mock-chat-1', capability: 'chat', maxTokens: 256, defaultMaxTokens: 64, price: UP_PRICE },
      ],
    },
  });
});
after(async () => {
  upstream?.release();
  await service?.stop();
  await upstream?.close();
});

const now = () => BigInt(Math.floor(Date.now() / 1000));
const payTo = () => service.rails.get('base')!.payTo;

/** Reads a stream to its end: the `data:` values. */
async function readEvents(response: Response): Promise<string[]> {
  const events: string[] = [];
  for await (const data of sseData(response)) events.push(data);
  return events;
}

for (const [path, body] of [
  ['/api/v1/ai/chat', SPEC_STREAM],
  ['/v1/chat/completions', V1_STREAM],
] as const) {
  test(`${path}: exact with a validBefore shorter than the stream can last is settled before the first byte`, async () => {
    upstream.reset();
    const buyer = await fundedEvmBuyer(service, ['base']);
    const requirement = await quoteFor(`${service.url}${path}`, body);
    const price = BigInt(requirement.maxAmountRequired);
    const payToBefore = await balanceOf(service, 'base', payTo());
    // valid for 16 s (the verify minimum is 6 s), and the model answers only after 18 s: without the rule the
    // whole answer would arrive after the proof expired, and its settlement would fail, nothing charged
    const validBefore = now() + 16n;
    upstream.fail(CHAT_PATH, { kind: 'delay', ms: 18_000 });
    const proof = await signEvmProof(buyer, requirement, BASE.chainId, { validBefore });
    const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base', 'X-PAYMENT': proof });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('x-payment-amount'), price.toString());
    const events = await readEvents(response);
    assert.ok(now() > validBefore, 'the answer ended after the proof expired');
    assert.equal(events.at(-1), '[DONE]');
    const receipt = JSON.parse(events.at(-2)!).x402;
    assert.equal(receipt.success, true);
    assert.equal(receipt.amount, price.toString());
    assert.equal(await balanceOf(service, 'base', buyer.address), 10_000_000n - price, 'charged once');
    assert.equal(await balanceOf(service, 'base', payTo()), payToBefore + price);
  });
}

test('exact on Solana, whose blockhash may expire mid-stream: settled before the first byte', async () => {
  upstream.reset();
  const buyer = await fundedSolanaBuyer(service, ['solana-devnet'], 5_000_000n);
  const rpcUrl = service.sandbox!.chains.get('solana-devnet')!.rpcUrl;
  const pay = wrapFetchV1(fetch, buyer as never, undefined, undefined, { svmConfig: { rpcUrl } });
  const quote = await postJson(`${service.url}/api/v1/ai/chat`, SPEC_STREAM, { 'X-Network': 'solana-devnet' });
  const price = BigInt(((await quote.json()) as { accepts: { maxAmountRequired: string }[] }).accepts[0]!.maxAmountRequired);
  // the model answers after 3 s; the balance is read while it has not: the payment moved before any of it
  upstream.fail(CHAT_PATH, { kind: 'delay', ms: 3_000 });
  const response = await pay(`${service.url}/api/v1/ai/chat`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'solana-devnet' },
    body: JSON.stringify(SPEC_STREAM),
  });
  assert.equal(response.status, 200, await response.clone().text());
  await until('the model to be asked', () => upstream.received(CHAT_PATH).length === 1);
  assert.equal(await balanceOf(service, 'solana-devnet', buyer.address), 5_000_000n - price, 'paid before the answer went out');
  const events = await readEvents(response);
  assert.equal(events.length > 2 && upstream.received(CHAT_PATH).length, 1, 'the answer came after the balance was read');
  assert.equal(JSON.parse(events.at(-2)!).x402.amount, price.toString());
});

/** An upto proof made by the official client, for a requirement whose validity the test chooses. */
async function uptoProof(buyer: PrivateKeyAccount, path: string, body: unknown, validSeconds: number): Promise<string> {
  const rpcUrl = service.sandbox!.chains.get('base')!.rpcUrl;
  const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl) }));
  const client = new x402Client().register(BASE.caip2 as `${string}:${string}`, new UptoEvmScheme(signer, { rpcUrl }));
  const quote = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  const required = JSON.parse(Buffer.from(quote.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8'));
  const upto = required.accepts.find((a: { scheme: string }) => a.scheme === 'upto');
  // the client signs a Permit2 deadline of now + maxTimeoutSeconds
  const payload = await client.createPaymentPayload({ ...required, accepts: [{ ...upto, maxTimeoutSeconds: validSeconds }] });
  return Buffer.from(JSON.stringify({ ...payload, accepted: upto })).toString('base64');
}

test('upto with a short deadline: the stream stops before the deadline and the words delivered are charged', async () => {
  upstream.reset();
  upstream.fail(CHAT_PATH, { kind: 'stream-hold', afterChunks: 2 });
  const buyer = await fundedEvmBuyer(service, ['base']);
  const proof = await uptoProof(buyer, '/api/v1/ai/chat', SPEC_STREAM, 22); // settleable for 7 s more
  const response = await postJson(`${service.url}/api/v1/ai/chat`, SPEC_STREAM, { 'PAYMENT-SIGNATURE': proof });
  assert.equal(response.status, 200, await response.clone().text());
  // the upstream never finishes: the gateway ends the stream itself, at the payment's deadline
  const events = await readEvents(response);
  assert.equal(events.at(-1), '[DONE]');
  const final = JSON.parse(events.at(-2)!);
  const words = events.slice(0, -2).map((data) => JSON.parse(data).delta as string);
  assert.ok(words.length >= 1, 'the words sent before the model held');
  assert.equal(final.response, words.join(''));
  const charged = BigInt(final.x402.amount);
  // 1000 per request + each word sent as a token at 2 + 21 characters at 0.1, rounded up
  assert.equal(charged, 1000n + 2n * BigInt(words.length) + 3n);
  assert.equal(await balanceOf(service, 'base', buyer.address), 10_000_000n - charged);
});

test('upto with a short deadline that cuts a tool call: only the words delivered are charged, not the cut call', async () => {
  upstream.reset();
  upstream.fail(CHAT_PATH, { kind: 'stream-hold', afterChunks: 2, toolCallPieces: 3 });
  const buyer = await fundedEvmBuyer(service, ['base']);
  const proof = await uptoProof(buyer, '/api/v1/ai/chat', SPEC_STREAM, 22); // settleable for 7 s more
  const response = await postJson(`${service.url}/api/v1/ai/chat`, SPEC_STREAM, { 'PAYMENT-SIGNATURE': proof });
  assert.equal(response.status, 200, await response.clone().text());
  const events = await readEvents(response);
  const final = JSON.parse(events.at(-2)!);
  const words = events.slice(0, -2).map((data) => JSON.parse(data).delta as string);
  assert.equal(final.response, words.join(''));
  // the same sum as above: the tool call's opening and its three pieces of arguments are not counted
  const charged = BigInt(final.x402.amount);
  assert.equal(charged, 1000n + 2n * BigInt(words.length) + 3n);
  assert.equal(await balanceOf(service, 'base', buyer.address), 10_000_000n - charged);
});

test('upto with a deadline too short for any answer: refused before any work, nothing moves', async () => {
  upstream.reset();
  const buyer = await fundedEvmBuyer(service, ['base']);
  const proof = await uptoProof(buyer, '/v1/chat/completions', V1_STREAM, 12);
  const response = await postJson(`${service.url}/v1/chat/completions`, V1_STREAM, { 'PAYMENT-SIGNATURE': proof });
  assert.equal(response.status, 402);
  const required = JSON.parse(Buffer.from(response.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8'));
  assert.match(required.error, /^payment_expires_too_soon/);
  assert.equal(upstream.requests.length, 0, 'no work ran');
  assert.equal(await balanceOf(service, 'base', buyer.address), 10_000_000n);
});
