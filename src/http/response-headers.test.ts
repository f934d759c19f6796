// requestId() and openCors() answer exactly what hono/request-id and hono/cors answered (status, headers,
// body), for every kind of response: a string body, JSON, an error rendered by onError, a 404, a stream,
// an immutable-headers response, and preflights; only a generated request id differs (a fresh UUID each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { requestId as honoRequestId } from 'hono/request-id';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { requestId } from './request-id.ts';
import { openCors } from './cors.ts';
import { plainResponse } from './response-headers.ts';

const allowHeaders = ['Content-Type', 'X-PAYMENT', 'X-Network'];
const exposeHeaders = ['X-PAYMENT-RESPONSE', 'X-Request-Id', 'Retry-After'];

function app(middlewares: MiddlewareHandler[], plain = false): Hono {
  const a = new Hono();
  for (const m of middlewares) a.use(m);
  a.post('/string', (c) => c.body('{"x402Version":1}', 402, { 'Content-Type': 'application/json' }));
  // the gateway's 402 answers with plainResponse(); the same answer built by Hono is what it must equal
  const paymentRequired = { 'PAYMENT-REQUIRED': 'eyJ4NDAyVmVyc2lvbiI6Mn0=', 'Cache-Control': 'no-store', 'Content-Type': 'application/json' };
  a.post('/plain', (c) => (plain ? plainResponse(c, '{"x402Version":1}', 402, paymentRequired) : c.body('{"x402Version":1}', 402, paymentRequired)));
  a.post('/receipt', (c) => c.json({ ok: true }, 200, { 'X-PAYMENT-RESPONSE': 'abc' }));
  a.get('/text', (c) => c.text('hello'));
  // a stream with its length, as the media route sends (without one, node-server frames a stream it no
  // longer has to copy as chunked rather than reading it ahead to count it: same bytes, other framing)
  a.get('/stream', (c) => c.body(new Blob(['streamed']).stream(), 200, { 'Content-Type': 'text/plain', 'Content-Length': '8' }));
  a.get('/redirect', () => Response.redirect('http://127.0.0.1/docs', 302));
  a.get('/throws', () => {
    throw new Error('boom');
  });
  a.get('/id', (c) => c.text(c.get('requestId')));
  a.notFound((c) => c.json({ error: 'no such route' }, 404));
  a.onError((_error, c) => c.json({ error: 'internal' }, 500, { 'Retry-After': '5' }));
  return a;
}

const hono = app([honoRequestId({ headerName: 'X-Request-Id' }), cors({ origin: '*', allowHeaders, exposeHeaders })]);
const ours = app([requestId(), openCors({ allowHeaders, exposeHeaders })], true);

async function snapshot(target: Hono | string, path: string, init: RequestInit) {
  const response = typeof target === 'string' ? await fetch(`${target}${path}`, { ...init, redirect: 'manual' }) : await target.request(path, init);
  const sentId = new Headers(init.headers).has('X-Request-Id');
  const headers = Object.fromEntries(
    [...response.headers].filter(([k]) => k !== 'date').map(([k, v]) => [k, k === 'x-request-id' && !sentId ? 'generated' : v]),
  );
  return { status: response.status, headers, body: await response.text() };
}

const cases: [string, RequestInit][] = [
  ['/string', { method: 'POST' }],
  ['/plain', { method: 'POST' }],
  ['/plain', { method: 'POST', headers: { 'X-Request-Id': 'caller-chosen-id' } }],
  ['/receipt', { method: 'POST', headers: { Origin: 'https://buyer.example', 'X-Request-Id': 'abc-123_=' } }],
  ['/text', {}],
  ['/stream', {}],
  ['/redirect', {}],
  ['/throws', {}],
  ['/nowhere', {}],
  ['/string', { method: 'OPTIONS', headers: { Origin: 'https://buyer.example', 'Access-Control-Request-Method': 'POST' } }],
  ['/nowhere', { method: 'OPTIONS', headers: { 'Access-Control-Request-Headers': 'x-payment' } }],
  ['/id', { headers: { 'X-Request-Id': 'caller-chosen-id' } }],
];

test('same status, headers and body as hono/request-id + hono/cors', async () => {
  for (const [path, init] of cases) {
    assert.deepEqual(await snapshot(ours, path, init), await snapshot(hono, path, init), `${init.method ?? 'GET'} ${path}`);
  }
});

test('the request id: the caller\'s when it is a plain token of at most 255 characters, else a fresh UUID', async () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  for (const [sent, kept] of [
    ['caller-chosen_id=1', true],
    ['x'.repeat(255), true],
    ['x'.repeat(256), false],
    ['has space', false],
    ['semi;colon', false],
    ['', false],
  ] as const) {
    const response = await ours.request('/id', sent ? { headers: { 'X-Request-Id': sent } } : {});
    const id = response.headers.get('x-request-id')!;
    assert.equal(await response.text(), id, 'c.get("requestId") is the id sent back');
    if (kept) assert.equal(id, sent);
    else assert.match(id, uuid);
  }
});

test('the same through @hono/node-server (its lightweight Response and cached bodies), over HTTP', async () => {
  const listen = (target: Hono) =>
    new Promise<{ url: string; close: () => void }>((resolve) => {
      const server = serve({ fetch: target.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) =>
        resolve({ url: `http://127.0.0.1:${info.port}`, close: () => server.close() }),
      );
    });
  const [a, b] = await Promise.all([listen(ours), listen(hono)]);
  try {
    for (const [path, init] of cases) {
      assert.deepEqual(await snapshot(a.url, path, init), await snapshot(b.url, path, init), `${init.method ?? 'GET'} ${path}`);
    }
  } finally {
    a.close();
    b.close();
  }
});
