// The quote lane (src/http/paid/quote-lane.ts) answers an unpaid call before the app does: its 402 must be the
// app's, header for header. A request with a query string always goes to the app (the lane takes exact paths
// only), so each case asks both and compares; the values made fresh per answer (X-Request-Id, Date, the
// sign-in-with-x nonce and timestamps) are set aside. Bodies the lane reads but does not answer reach the
// app intact (its error names what was wrong with them).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestService } from './support/service.ts';
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
];

describe('the unpaid 402 from the quote lane is the app’s', () => {
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

  test('a paid call, a sign-in or another Content-Type is the app’s from the start', async () => {
    const text = JSON.stringify({ prompt: 'a red fox' });
    const proof = await post('/api/v1/ai/images', text, { ...JSON_TYPE, 'X-PAYMENT': 'not-base64!' });
    assert.equal(proof.status, 402);
    assert.match(JSON.parse(proof.body).error, /invalid_payment|X-PAYMENT/);
    const plainText = await post('/api/v1/ai/images', text, { 'Content-Type': 'text/plain' });
    assert.equal(plainText.status, 415);
  });
});
