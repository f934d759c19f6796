// Requests no route handles: 405 with Allow when the path is routed for other methods (routes of the app
// itself and of mounted sub-apps, GET routes also allowing HEAD), 404 otherwise; both in the one error
// shape, through middleware as in the real app, with CORS preflights still answered.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { pino } from 'pino';
import { allowedMethods, unrouted } from './unrouted.ts';
import { renderError } from './render-error.ts';
import { openCors } from './cors.ts';

function app(): Hono {
  const a = new Hono();
  a.use(openCors({ allowHeaders: ['Content-Type'], exposeHeaders: ['X-Request-Id'] }));
  a.use('/guarded/*', async (_c, next) => next());
  a.post('/api/chat', (c) => c.json({ ok: 'chat' }));
  a.get('/healthz', (c) => c.json({ ok: 'health' }));
  a.get('/both', (c) => c.text('got'));
  a.post('/both', (c) => c.text('posted'));
  const sub = new Hono();
  sub.get('/media/:id', (c) => c.text(c.req.param('id')));
  sub.get('/guarded/list', (c) => c.text('list'));
  a.route('/', sub);
  a.notFound(unrouted(a));
  const log = pino({ level: 'silent' });
  a.onError((error, c) => renderError(error, c, log));
  return a;
}

const routed = app();

async function expectError(response: Response, status: number, body: Record<string, string>, allow: string | null) {
  assert.equal(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(response.headers.get('allow'), allow);
  assert.equal(response.headers.get('access-control-allow-origin'), '*', 'errors keep their CORS headers');
  assert.deepEqual(await response.json(), body);
}

describe('allowedMethods', () => {
  test('the methods routed at a path, sorted, HEAD beside GET; middleware counts for nothing', () => {
    assert.deepEqual(allowedMethods(routed, '/api/chat'), ['POST']);
    assert.deepEqual(allowedMethods(routed, '/healthz'), ['GET', 'HEAD']);
    assert.deepEqual(allowedMethods(routed, '/both'), ['GET', 'HEAD', 'POST']);
    assert.deepEqual(allowedMethods(routed, '/media/abc'), ['GET', 'HEAD'], 'a pattern of a mounted sub-app');
    assert.deepEqual(allowedMethods(routed, '/guarded/list'), ['GET', 'HEAD']);
    for (const path of ['/nowhere', '/guarded/other', '/media/', '/media/a/b', '/healthz/']) {
      assert.deepEqual(allowedMethods(routed, path), [], path);
    }
  });
});

describe('unrouted', () => {
  test('a routed method is answered by its route', async () => {
    assert.equal(await (await routed.request('/both', { method: 'POST' })).text(), 'posted');
    assert.equal((await routed.request('/healthz', { method: 'HEAD' })).status, 200);
  });

  test('a wrong method on a GET route: 405 with Allow: GET, HEAD', async () => {
    for (const [method, path] of [['POST', '/healthz'], ['PUT', '/media/abc'], ['DELETE', '/guarded/list'], ['PATCH', '/healthz']]) {
      await expectError(
        await routed.request(path!, { method }),
        405,
        { error: `${method} is not allowed here; use GET or HEAD`, code: 'method_not_allowed' },
        'GET, HEAD',
      );
    }
  });

  test('a wrong method on a POST route, HEAD included: 405 with Allow: POST', async () => {
    for (const method of ['GET', 'HEAD', 'PUT']) {
      const response = await routed.request('/api/chat', { method });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST', method);
      if (method !== 'HEAD') assert.equal(((await response.json()) as { code: string }).code, 'method_not_allowed');
    }
    await expectError(
      await routed.request('/both', { method: 'DELETE' }),
      405,
      { error: 'DELETE is not allowed here; use GET or HEAD or POST', code: 'method_not_allowed' },
      'GET, HEAD, POST',
    );
  });

  test('an unknown path is a 404 for every method, even under a middleware prefix', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      for (const path of ['/nowhere', '/guarded/other', '/media/a/b']) {
        await expectError(
          await routed.request(path, { method }),
          404,
          { error: 'no such route; see /openapi.json', code: 'not_found' },
          null,
        );
      }
    }
  });

  test('CORS preflights are still answered on routed and unknown paths alike', async () => {
    for (const path of ['/api/chat', '/healthz', '/nowhere']) {
      const response = await routed.request(path, {
        method: 'OPTIONS',
        headers: { Origin: 'https://buyer.example', 'Access-Control-Request-Method': 'POST' },
      });
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get('access-control-allow-origin'), '*', path);
      assert.match(response.headers.get('access-control-allow-methods') ?? '', /POST/, path);
    }
  });
});
