// Streamed chat under x402 `upto`, paid by the unmodified official client (@x402/fetch with @x402/evm's
// UptoEvmScheme) on the sandbox base chain, on both chat routes: the settlement after the last token charges
// the tokens the stream produced (from the model's final usage, by the price table), the last event's receipt
// says so, balances read on-chain move by exactly that, a replay moves nothing, and a client that leaves
// mid-stream is charged nothing.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { CHAT_TEXT, CHAT_USAGE, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { uptoPaymentKey, type UptoPermit2Payload } from '../src/x402/upto.ts';
import type { RunningService } from '../src/service.ts';

const BASE = NETWORKS.base as EvmNetwork;
const PROMPT = 'Tell me about the sea';
// a short answer under a large budget: the ceiling is priced on max_tokens, the charge on what was streamed
const SPEC_STREAM = { model: 'local/demo-bigram', prompt: PROMPT, max_tokens: 128, options: { seed: 7 }, stream: true };
const V1_STREAM = {
  model: 'local/demo-bigram',
  messages: [{ role: 'user' as const, content: PROMPT }],
  max_tokens: 128,
  seed: 7,
  stream: true as const,
  stream_options: { include_usage: true },
};
const UP_CHAT = 'up/chat';
const UP_PRICE = { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' };
const UP_STREAM = { model: UP_CHAT, messages: [{ role: 'user' as const, content: PROMPT }], stream: true, stream_options: { include_usage: true } };

let upstream: OpenAIUpstream;
let service: RunningService;
before(async () => {
  upstream = await startOpenAIUpstream();
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL, timeoutMs: 30_000, maxRetries: 0 } },
      models: [
        ...embeddedModels(),
        { id: UP_CHAT, provider: 'mock', upstreamModel: 'mock-chat-1', capability: 'chat', maxTokens: 256, defaultMaxTokens: 64, price: UP_PRICE },
      ],
    },
  });
});
after(async () => {
  await service?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

const rpcUrl = () => service.sandbox!.chains.get('base')!.rpcUrl;
const payTo = () => service.rails.get('base')!.payTo;

function uptoClient(buyer: PrivateKeyAccount): x402Client {
  const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl()) }));
  return new x402Client().register(BASE.caip2 as `${string}:${string}`, new UptoEvmScheme(signer, { rpcUrl: rpcUrl() }));
}

/** @x402/fetch paying under upto, keeping each PAYMENT-SIGNATURE it sent (to replay it). */
function payingUpto(buyer: PrivateKeyAccount): { pay: typeof fetch; proofs: string[] } {
  const proofs: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const headers = init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined);
    const proof = new Headers(headers).get('PAYMENT-SIGNATURE');
    if (proof) proofs.push(proof);
    return fetch(input, init);
  };
  return { pay: wrapFetchWithPayment(recording, uptoClient(buyer)), proofs };
}

/** The upto requirement of the 402 for `body` on base: its ceiling. */
async function ceilingOf(path: string, body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  const required = JSON.parse(Buffer.from(response.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8'));
  const upto = required.accepts.find((a: { scheme: string }) => a.scheme === 'upto');
  assert.ok(upto, 'upto is offered for a streamed chat');
  return BigInt(upto.amount);
}

/** What the price table says `completionTokens` of output cost for `inputChars` of prompt (integer, rounded up). */
async function meteredCost(model: string, completionTokens: number, inputChars: number): Promise<bigint> {
  const listing = (await (await fetch(`${service.url}/api/v1/ai/models`)).json()) as { models: { id: string; price: typeof UP_PRICE }[] };
  const { price } = listing.models.find((entry) => entry.id === model)!;
  const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
  return (
    BigInt(price.perRequest) +
    ceilDiv(BigInt(completionTokens) * BigInt(price.perThousandOutputTokens), 1000n) +
    ceilDiv(BigInt(inputChars) * BigInt(price.perThousandInputChars), 1000n)
  );
}

async function readEvents(response: Response): Promise<string[]> {
  const events: string[] = [];
  for await (const data of sseData(response)) events.push(data);
  return events;
}

const balances = async (buyer: PrivateKeyAccount) => [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo())] as const;

test('/api/v1/ai/chat streamed under upto: the last event carries the metered charge, below the ceiling, moved on-chain once', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const ceiling = await ceilingOf('/api/v1/ai/chat', SPEC_STREAM);
  const [buyerBefore, payToBefore] = await balances(buyer);
  const { pay, proofs } = payingUpto(buyer);

  const response = await pay(`${service.url}/api/v1/ai/chat`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
    body: JSON.stringify(SPEC_STREAM),
  });
  assert.equal(response.status, 200, await response.clone().text());
  assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
  assert.equal(response.headers.get('x-payment-amount'), null, 'under upto the charge is not known when the stream opens');
  const events = await readEvents(response);
  assert.equal(events.at(-1), '[DONE]');
  const final = JSON.parse(events.at(-2)!);
  const deltas = events.slice(0, -2).map((data) => JSON.parse(data).delta as string);
  assert.ok(deltas.length > 1, 'token by token');
  assert.equal(deltas.join(''), final.response);

  const charged = BigInt(final.x402.amount);
  assert.equal(final.x402.success, true);
  assert.match(final.x402.transaction, /^0x[0-9a-f]{64}$/);
  assert.ok(charged > 0n && charged < ceiling, `charged ${charged} below the ceiling ${ceiling}`);
  assert.deepEqual(await balances(buyer), [buyerBefore - charged, payToBefore + charged]);

  // the ledger keeps both the authorized maximum and what was settled
  const [proof] = proofs;
  const payload = JSON.parse(Buffer.from(proof!, 'base64').toString('utf8')).payload as UptoPermit2Payload;
  const record = await service.ledger.get(uptoPaymentKey(BASE.chainId, payload));
  assert.deepEqual([record?.state, record?.amount, record?.settledAmount], ['settled', ceiling.toString(), charged.toString()]);

  // the same proof again: the kept answer streamed whole with the same receipt, and nothing moves
  const replay = await postJson(`${service.url}/api/v1/ai/chat`, SPEC_STREAM, { 'PAYMENT-SIGNATURE': proof! });
  assert.equal(replay.status, 200);
  assert.equal(replay.headers.get('x-payment-amount'), charged.toString());
  const replayed = await readEvents(replay);
  const again = JSON.parse(replayed.at(-2)!);
  assert.equal(again.response, final.response);
  assert.equal(again.x402.amount, charged.toString());
  assert.deepEqual(await balances(buyer), [buyerBefore - charged, payToBefore + charged], 'a replay moves nothing');
});

test('/v1/chat/completions streamed under upto (openai SDK): charged the price of the completion tokens the stream reports', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const ceiling = await ceilingOf('/v1/chat/completions', V1_STREAM);
  const [buyerBefore, payToBefore] = await balances(buyer);
  const openai = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: payingUpto(buyer).pay, maxRetries: 0 });

  const stream = await openai.chat.completions.create(V1_STREAM);
  let text = '';
  let last: any;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    last = chunk;
  }
  assert.ok(text.length > 0);
  const { usage, x402 } = last;
  assert.ok(usage.completion_tokens > 0 && usage.completion_tokens < V1_STREAM.max_tokens, 'a short answer under a large budget');
  const charged = BigInt(x402.amount);
  assert.equal(charged, await meteredCost(V1_STREAM.model, usage.completion_tokens, PROMPT.length));
  assert.ok(charged < ceiling);
  assert.deepEqual(await balances(buyer), [buyerBefore - charged, payToBefore + charged]);
});

test('an upstream model streamed under upto is charged for the tokens of its final usage', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const ceiling = await ceilingOf('/v1/chat/completions', UP_STREAM);
  const [buyerBefore] = await balances(buyer);
  const { pay } = payingUpto(buyer);
  const response = await pay(`${service.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
    body: JSON.stringify(UP_STREAM),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const chunks = (await readEvents(response)).slice(0, -1).map((data) => JSON.parse(data));
  assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join(''), CHAT_TEXT);
  const last = chunks.at(-1);
  assert.deepEqual(last.usage, CHAT_USAGE);
  const expected = await meteredCost(UP_CHAT, CHAT_USAGE.completion_tokens, PROMPT.length);
  assert.equal(expected, 1025n, '1000 per request + 11 tokens at 2 per token + 21 characters at 0.1, rounded up');
  assert.ok(expected < ceiling);
  assert.equal(BigInt(last.x402.amount), expected);
  assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - expected);
});

test('a client that leaves a stream under upto is charged nothing; the same proof then pays once, for the whole answer', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const [buyerBefore] = await balances(buyer);
  // the official client's payment, signed from the 402 but not sent yet
  const quote = await postJson(`${service.url}/v1/chat/completions`, UP_STREAM, { 'X-Network': 'base' });
  const client = new x402HTTPClient(uptoClient(buyer));
  const payment = await client.createPaymentPayload(client.getPaymentRequiredResponse((name) => quote.headers.get(name), await quote.json()));
  assert.equal(payment.accepted.scheme, 'upto');
  const proof = client.encodePaymentSignatureHeader(payment)['PAYMENT-SIGNATURE']!;
  const key = uptoPaymentKey(BASE.chainId, payment.payload as unknown as UptoPermit2Payload);

  upstream.fail('/v1/chat/completions', { kind: 'stream-hold', afterChunks: 3 });
  const leaving = new AbortController();
  const response = await fetch(`${service.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'PAYMENT-SIGNATURE': proof },
    body: JSON.stringify(UP_STREAM),
    signal: leaving.signal,
  });
  assert.equal(response.status, 200);
  for await (const data of sseData(response)) if (JSON.parse(data).choices[0]?.delta?.content) break;
  leaving.abort();
  await until('the gateway to stop reading the model', () => upstream.streamsClosedEarly === 1);
  await until('the reservation to be released', async () => (await service.ledger.get(key))?.state === 'released');
  assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore, 'nothing delivered completely, nothing charged');

  const whole = await until('the payment to be free to use', async () => {
    const attempt = await postJson(`${service.url}/v1/chat/completions`, UP_STREAM, { 'PAYMENT-SIGNATURE': proof });
    if (attempt.status === 409) return void (await attempt.body?.cancel());
    return attempt;
  });
  assert.equal(whole.status, 200, await whole.clone().text());
  const last = JSON.parse((await readEvents(whole)).at(-2)!);
  const charged = BigInt(last.x402.amount);
  assert.equal(charged, await meteredCost(UP_CHAT, CHAT_USAGE.completion_tokens, PROMPT.length));
  assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - charged, 'charged once');
  assert.equal((await service.ledger.get(key))?.settledAmount, charged.toString());
});
