// The paid lane (src/http/paid/paid-lane.ts) answers a paid route's call before the app does: its 402, its paid
// result and its refusals must be the app's, header for header. A request with a query string always goes to the
// app (the lane takes exact paths only), so each case asks both and compares; the values made fresh per answer
// (X-Request-Id, Date, the sign-in-with-x nonce and timestamps, a result's id and its receipt's transaction) are set
// aside. Bodies the lane reads but does not answer reach the app intact (its error names what was wrong with them).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestService } from './support/service.ts';
import { quoteFor } from './support/paid-call.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base', 'solana-devnet'] });
});
after(() => service.stop());

interface Answer {
  status: number;
  /** header names in the order they came */
  names: string[];
  headers: Record<string, string>;
  body: string;
}

/** A POST with exactly these headers (node:http: fetch would add its own). */
function post(path: string, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${service.url}${path}`, { method: 'POST', headers: { 'Content-Length': Buffer.byteLength(body), ...headers } }, (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (text += chunk));
      incoming.on('end', () => {
        const names = incoming.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
        resolve({ status: incoming.statusCode!, names, headers: incoming.headers as Record<string, string>, body: text });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** What must be equal between two answers to one request: everything but the values made per answer. */
function comparable(answer: Answer) {
  const { 'x-request-id': _id, date: _date, 'payment-required': required, ...headers } = answer.headers;
  let paymentRequired: unknown;
  if (required) {
    const document = JSON.parse(Buffer.from(required, 'base64').toString('utf8')) as { extensions?: Record<string, { info?: Record<string, unknown> }> };
    const info = document.extensions?.['sign-in-with-x']?.info;
    if (info) for (const fresh of ['nonce', 'issuedAt', 'expirationTime']) info[fresh] = typeof info[fresh];
    paymentRequired = document;
  }
  return { status: answer.status, headers, paymentRequired, body: answer.body };
}

/** node:http writes Date, Connection and Keep-Alive first, then what the app set; the lane sets Content-Length itself. */
const answeredByLane = (answer: Answer) => answer.names.indexOf('content-length') < answer.names.indexOf('date');

const JSON_TYPE = { 'Content-Type': 'application/json' };
const CASES: { name: string; path: string; body: unknown; headers: Record<string, string> }[] = [
  { name: 'an image call on base', path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 2, size: '256x256' }, headers: { 'X-Network': 'base' } },
  { name: 'a chat call on solana-devnet', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'Hello' }, headers: { 'X-Network': 'solana-devnet' } },
  { name: 'a tts call without X-Network', path: '/api/v1/ai/tts', body: { text: 'Hello world' }, headers: {} },
  { name: 'an image call on a network not served', path: '/api/v1/ai/images', body: { prompt: 'a red fox' }, headers: { 'X-Network': 'polygon' } },
  { name: 'a streamed chat call', path: '/v1/chat/completions', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Hi' }], stream: true }, headers: { 'X-Network': 'base' } },
];

describe('the unpaid 402 from the paid lane is the app’s', () => {
  for (const { name, path, body, headers } of CASES) {
    test(name, async () => {
      const text = JSON.stringify(body);
      const fromLane = await post(path, text, { ...JSON_TYPE, ...headers });
      const fromApp = await post(`${path}?via=app`, text, { ...JSON_TYPE, ...headers });
      assert.equal(fromLane.status, 402);
      assert.ok(answeredByLane(fromLane), `answered by the lane: ${fromLane.names.join(', ')}`);
      assert.ok(!answeredByLane(fromApp), 'a query string goes to the app');
      assert.deepEqual(comparable(fromLane), comparable(fromApp));
    });
  }

  test('a caller’s own X-Request-Id comes back; an unsafe one is replaced', async () => {
    const text = JSON.stringify({ prompt: 'a red fox' });
    const kept = await post('/api/v1/ai/images', text, { ...JSON_TYPE, 'X-Request-Id': 'trace-42' });
    assert.equal(kept.headers['x-request-id'], 'trace-42');
    const replaced = await post('/api/v1/ai/images', text, { ...JSON_TYPE, 'X-Request-Id': 'no spaces allowed' });
    assert.match(replaced.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
  });

  test('each 402 carries a fresh sign-in nonce', async () => {
    const text = JSON.stringify({ prompt: 'a red fox' });
    const nonces = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const answer = await post('/api/v1/ai/images', text, { ...JSON_TYPE, 'X-Network': 'base' });
      const document = JSON.parse(Buffer.from(answer.headers['payment-required']!, 'base64').toString('utf8'));
      nonces.add(document.extensions['sign-in-with-x'].info.nonce);
    }
    assert.equal(nonces.size, 3);
  });

  test('an unpaid call asked again gets the answer it got, notes and all; other bytes get their own', async () => {
    const message = { model: 'local/demo-bigram', max_tokens: 1_000_000, metadata: { user_id: 'u' }, messages: [{ role: 'user', content: 'Hi' }] };
    const ask = (body: unknown, headers: Record<string, string> = {}) => post('/v1/messages', JSON.stringify(body), { ...JSON_TYPE, 'X-Network': 'base', ...headers });
    const first = await ask(message);
    await ask(message); // asked again: kept from here on (unpaid-quotes.ts)
    const again = await ask(message, { 'X-Request-Id': 'asked-again' });
    assert.equal(again.status, 402);
    assert.equal(again.headers['x-request-id'], 'asked-again');
    assert.equal(again.headers['x-ignored-fields'], 'metadata');
    assert.deepEqual(comparable(again), comparable(first));
    assert.deepEqual(comparable(await post('/v1/messages?via=app', JSON.stringify(message), { ...JSON_TYPE, 'X-Network': 'base' })), comparable(again));

    const amountOf = (answer: Answer) => (JSON.parse(answer.body) as { accepts: { maxAmountRequired: string }[] }).accepts[0]!.maxAmountRequired;
    const shorter = await ask({ ...message, max_tokens: 8 });
    assert.ok(BigInt(amountOf(shorter)) < BigInt(amountOf(first)), 'fewer tokens, a lower ceiling');
    const solana = await ask(message, { 'X-Network': 'solana-devnet' });
    assert.deepEqual(JSON.parse(solana.body).accepts.map((a: { network: string }) => a.network), ['solana-devnet']);
    const anyNetwork = await post('/v1/messages', JSON.stringify(message), JSON_TYPE);
    assert.deepEqual(JSON.parse(anyNetwork.body).accepts.map((a: { network: string }) => a.network), ['base', 'solana-devnet']);
  });

  test('the lane’s answers are counted in /metrics under the route', async () => {
    const count = async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('http_requests_total{') && l.includes('route="/api/v1/ai/tts"') && l.includes('status="402"'));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    const before = await count();
    const answer = await post('/api/v1/ai/tts', JSON.stringify({ text: 'Hi' }), JSON_TYPE);
    assert.ok(answeredByLane(answer));
    assert.equal(await count(), before + 1);
  });
});

describe('a body the lane reads but does not answer reaches the app whole', () => {
  const refused = [
    { name: 'a size no model has', body: JSON.stringify({ prompt: 'a red fox', size: '9x9' }), status: 400, field: 'size' },
    { name: 'a body that is not JSON', body: '{"prompt": "a red fox"', status: 400, code: 'invalid_json' },
    { name: 'a key named __proto__', body: '{"prompt": "a red fox", "__proto__": {"n": 5}}', status: 400, field: '__proto__' },
    { name: 'an empty body', body: '', status: 400, code: 'invalid_json' },
  ];
  for (const { name, body, status, field, code } of refused) {
    test(name, async () => {
      const fromLane = await post('/api/v1/ai/images', body, { ...JSON_TYPE, 'X-Network': 'base' });
      const fromApp = await post('/api/v1/ai/images?via=app', body, { ...JSON_TYPE, 'X-Network': 'base' });
      assert.equal(fromLane.status, status);
      const error = JSON.parse(fromLane.body) as { code: string; field?: string };
      if (field) assert.equal(error.field, field);
      if (code) assert.equal(error.code, code);
      assert.deepEqual(comparable(fromLane), comparable(fromApp));
    });
  }

  test('a sign-in or another Content-Type is the app’s from the start', async () => {
    const text = JSON.stringify({ prompt: 'a red fox' });
    const signIn = await post('/api/v1/ai/images', text, { ...JSON_TYPE, 'SIGN-IN-WITH-X': 'not-base64!' });
    assert.equal(signIn.status, 401, 'the app checks the sign-in (the lane would have answered 402)');
    const plainText = await post('/api/v1/ai/images', text, { 'Content-Type': 'text/plain' });
    assert.equal(plainText.status, 415);
  });
});

describe('a paid call from the paid lane is the app’s', () => {
  const CHAT = { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 16 };

  /** A proof for one call of `body` on base, signed as the official v1 client signs it. */
  async function proofFor(path: string, body: unknown, buyer: Awaited<ReturnType<typeof fundedEvmBuyer>>): Promise<string> {
    return signEvmProof(buyer, await quoteFor(`${service.url}${path}`, body), (NETWORKS.base as EvmNetwork).chainId);
  }

  /**
   * What two paid answers share: their status, header names and charge, receipt (but its transaction) and the
   * body's form (the demo model's words and token counts vary from call to call).
   */
  function comparablePaid(answer: Answer) {
    const { 'x-payment-response': receipt, ...rest } = comparable(answer).headers;
    const { success, network, payer } = decodeReceipt(receipt ?? null);
    const varying = /^(content-length|x-usage-.*)$/;
    const headers = Object.fromEntries(Object.entries(rest).map(([name, value]) => [name, varying.test(name) ? 'varies' : value]));
    const form = JSON.parse(answer.body, (_key, value: unknown) => (typeof value === 'string' || typeof value === 'number' ? typeof value : value));
    return { status: answer.status, headers, receipt: { success, network, payer }, form };
  }

  test('the chat result, its receipt and charge headers, paid once each way', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const before = await balanceOf(service, 'base', buyer.address);
    const text = JSON.stringify(CHAT);
    const headers = (proof: string) => ({ ...JSON_TYPE, 'X-Network': 'base', 'X-PAYMENT': proof });
    const fromLane = await post('/api/v1/ai/chat', text, headers(await proofFor('/api/v1/ai/chat', CHAT, buyer)));
    const fromApp = await post('/api/v1/ai/chat?via=app', text, headers(await proofFor('/api/v1/ai/chat', CHAT, buyer)));
    assert.equal(fromLane.status, 200, fromLane.body);
    assert.ok(answeredByLane(fromLane), `answered by the lane: ${fromLane.names.join(', ')}`);
    assert.ok(!answeredByLane(fromApp));
    assert.deepEqual(comparablePaid(fromLane), comparablePaid(fromApp));
    const charged = BigInt(fromLane.headers['x-payment-amount']!) + BigInt(fromApp.headers['x-payment-amount']!);
    assert.equal(await balanceOf(service, 'base', buyer.address), before - charged);
  });

  test('a proof already honoured is refused alike by the lane and by the app, and charged once', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const before = await balanceOf(service, 'base', buyer.address);
    const text = JSON.stringify(CHAT);
    const headers = { ...JSON_TYPE, 'X-Network': 'base', 'X-PAYMENT': await proofFor('/api/v1/ai/chat', CHAT, buyer) };
    const first = await post('/api/v1/ai/chat', text, headers);
    assert.equal(first.status, 200, first.body);
    const again = await post('/api/v1/ai/chat', text, headers);
    const againByApp = await post('/api/v1/ai/chat?via=app', text, headers);
    assert.ok(answeredByLane(again));
    assert.deepEqual(comparable(again), comparable(againByApp));
    assert.equal(await balanceOf(service, 'base', buyer.address), before - BigInt(first.headers['x-payment-amount']!));
  });

  test('an Anthropic message with fields it ignores and lowers: the same notes, the same shape', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const message = { model: 'local/demo-bigram', max_tokens: 1_000_000, metadata: { user_id: 'u' }, messages: [{ role: 'user', content: 'Hi' }] };
    const text = JSON.stringify(message);
    const headers = async () => ({ ...JSON_TYPE, 'X-Network': 'base', 'X-PAYMENT': await proofFor('/v1/messages', message, buyer) });
    const fromLane = await post('/v1/messages', text, await headers());
    const fromApp = await post('/v1/messages?via=app', text, await headers());
    assert.equal(fromLane.status, 200, fromLane.body);
    assert.ok(answeredByLane(fromLane));
    assert.equal(fromLane.headers['x-ignored-fields'], 'metadata');
    assert.match(fromLane.headers['x-clamped-fields'] ?? '', /^max_tokens=\d+$/);
    assert.deepEqual(comparablePaid(fromLane), comparablePaid(fromApp));
  });

  test('a streamed chat: the same head, the same events, each with its receipt last', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const streamed = { ...CHAT, stream: true };
    const text = JSON.stringify(streamed);
    const headers = async () => ({ ...JSON_TYPE, 'X-Network': 'base', 'X-PAYMENT': await proofFor('/api/v1/ai/chat', streamed, buyer) });
    const fromLane = await post('/api/v1/ai/chat', text, await headers());
    const fromApp = await post('/api/v1/ai/chat?via=app', text, await headers());
    assert.equal(fromLane.status, 200, fromLane.body);
    const events = (answer: Answer) =>
      answer.body
        .split('\n\n')
        .map((event) => event.slice('data: '.length))
        .filter((data) => data && data !== '[DONE]')
        .map((data) => JSON.parse(data) as Record<string, unknown>);
    const [laneEvents, appEvents] = [events(fromLane), events(fromApp)];
    const receiptOf = (list: Record<string, unknown>[]) => {
      const { transaction: _tx, ...receipt } = list.at(-1)!.x402 as Record<string, unknown>;
      return receipt;
    };
    assert.deepEqual(receiptOf(laneEvents), receiptOf(appEvents));
    assert.deepEqual(Object.keys(laneEvents[0]!), Object.keys(appEvents[0]!));
    assert.deepEqual(comparable(fromLane).headers, comparable(fromApp).headers);
  });

  test('a payment header that does not decode is refused alike', async () => {
    const text = JSON.stringify({ prompt: 'a red fox' });
    const headers = { ...JSON_TYPE, 'X-PAYMENT': 'not-base64!' };
    const fromLane = await post('/api/v1/ai/images', text, headers);
    const fromApp = await post('/api/v1/ai/images?via=app', text, headers);
    assert.equal(fromLane.status, 402);
    assert.match(JSON.parse(fromLane.body).error, /invalid_payment|X-PAYMENT/);
    assert.deepEqual(comparable(fromLane), comparable(fromApp));
  });
});
