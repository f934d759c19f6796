import { after, before, test } from 'node:test';
import { getEventListeners } from 'node:events';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { Readable } from 'node:stream';
import { createNodeHttpClient, createNodeHttpFetch } from './node-http-fetch.ts';
import { unusedPort } from '../../test/support/ports.ts';

const TEXT = 'The sea is large, salty and mostly blue. '.repeat(50);
const sockets = new Set<unknown>();
let server: Server;
let origin: string;

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

before(async () => {
  server = createServer(async (req, res) => {
    sockets.add(req.socket);
    const path = new URL(req.url!, 'http://x').pathname;
    const body = await readAll(req);
    switch (path) {
      case '/echo':
        res.writeHead(201, 'Made', { 'Content-Type': 'application/json', 'X-Custom': 'yes' });
        res.end(JSON.stringify({ method: req.method, body, headers: req.headers }));
        return;
      case '/gzip':
      case '/deflate':
      case '/br': {
        const packed = path === '/gzip' ? gzipSync(TEXT) : path === '/deflate' ? deflateSync(TEXT) : brotliCompressSync(TEXT);
        res.writeHead(200, { 'Content-Encoding': path.slice(1), 'Content-Length': String(packed.length) });
        res.end(packed);
        return;
      }
      case '/empty':
        res.writeHead(204);
        res.end();
        return;
      case '/redirect':
        res.writeHead(302, { Location: '/echo' });
        res.end('moved');
        return;
      case '/slow':
        setTimeout(() => res.end('late'), 2_000);
        return;
      case '/late':
        setTimeout(() => res.end('late'), 400);
        return;
      case '/slow-body':
        res.writeHead(200, { 'Content-Length': '10' });
        res.write('12345');
        return;
      case '/cut':
        res.writeHead(200, { 'Content-Length': String(TEXT.length) });
        res.write(TEXT.slice(0, 100), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  }),
);

const nodeFetch = createNodeHttpFetch();

test('a JSON POST: status, status text, headers and body as fetch gives them, over one kept-alive connection', async () => {
  sockets.clear();
  for (let i = 0; i < 3; i++) {
    const init = { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer k' }, body: '{"a":1}' };
    const ours = await nodeFetch(`${origin}/echo`, init);
    const theirs = await fetch(`${origin}/echo`, init);
    assert.equal(ours.status, theirs.status);
    assert.equal(ours.statusText, 'Made');
    assert.equal(ours.ok, true);
    assert.equal(ours.url, `${origin}/echo`);
    assert.equal(ours.headers.get('x-custom'), 'yes');
    assert.equal(ours.headers.get('content-type'), theirs.headers.get('content-type'));
    const echoed = (await ours.json()) as { method: string; body: string; headers: Record<string, string> };
    await theirs.arrayBuffer();
    assert.equal(echoed.method, 'POST');
    assert.equal(echoed.body, '{"a":1}');
    assert.equal(echoed.headers['content-length'], '7');
    assert.equal(echoed.headers.authorization, 'Bearer k');
    assert.match(echoed.headers['accept-encoding']!, /gzip/);
  }
  assert.equal(sockets.size, 2, 'one connection for our three calls, one for global fetch');
});

test('byte bodies are sent as they are', async () => {
  const response = await nodeFetch(`${origin}/echo`, { method: 'POST', body: new TextEncoder().encode('bytes') });
  assert.equal(((await response.json()) as { body: string }).body, 'bytes');
});

test('gzip, deflate and br bodies are decoded', async () => {
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const response = await nodeFetch(`${origin}/${encoding}`);
    assert.equal(await response.text(), TEXT, encoding);
    assert.equal(response.headers.get('content-encoding'), encoding);
  }
});

test('a 204 has no body', async () => {
  const response = await nodeFetch(`${origin}/empty`);
  assert.equal(response.status, 204);
  assert.equal(response.body, null);
});

test('redirects: manual hands back the 3xx, a GET follows to the target, error and a POST refuse', async () => {
  const manual = await nodeFetch(`${origin}/redirect`, { redirect: 'manual' });
  assert.equal(manual.status, 302);
  assert.equal(manual.headers.get('location'), '/echo');
  const followed = await nodeFetch(`${origin}/redirect`);
  assert.equal(followed.status, 201);
  await followed.arrayBuffer();
  const fetchFailed = (error: Error) => error instanceof TypeError && error.message === 'fetch failed';
  await assert.rejects(nodeFetch(`${origin}/redirect`, { redirect: 'error' }), fetchFailed);
  // followed, a POST would reach the first address twice
  await assert.rejects(nodeFetch(`${origin}/redirect`, { method: 'POST', body: '{}' }), fetchFailed);
});

test('a status a Response cannot hold (1xx, over 599) fails the call as fetch failed, and the process lives', async () => {
  const raw = createNetServer((socket) => {
    socket.once('data', (request) => {
      const status = /GET \/(\d+)/.exec(request.toString())![1];
      socket.end(`HTTP/1.1 ${status} Odd\r\nContent-Length: 2\r\n\r\nhi`);
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  try {
    const at = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    for (const status of [101, 600, 999]) {
      await assert.rejects(nodeFetch(`${at}/${status}`), (error: Error) => error instanceof TypeError && error.message === 'fetch failed', String(status));
    }
  } finally {
    raw.close();
  }
});

test('a call slower than the idle timeout is not cut; its connection, once unused that long, is closed', async () => {
  const quick = createNodeHttpFetch({ idleTimeoutMs: 150 });
  sockets.clear();
  const late = await quick(`${origin}/late`);
  assert.equal(await late.text(), 'late', 'answered 400 ms after it was asked');
  const [socket] = [...sockets] as Socket[];
  await new Promise<void>((resolve) => socket!.once('close', () => resolve()));
});

test('what it does not cover goes to the fallback fetch untouched', async () => {
  const seen: unknown[] = [];
  const fallback: typeof fetch = async (input, init) => {
    seen.push(init?.body ?? input);
    return new Response('from fallback');
  };
  const withFallback = createNodeHttpFetch({ fallback });
  const form = new FormData();
  form.set('a', 'b');
  assert.equal(await (await withFallback(`${origin}/echo`, { method: 'POST', body: form })).text(), 'from fallback');
  const request = new Request(`${origin}/echo`);
  assert.equal(await (await withFallback(request)).text(), 'from fallback');
  assert.deepEqual(seen, [form, request]);
});

test('a refused connection rejects as fetch does: TypeError("fetch failed") with the cause', async () => {
  const port = await unusedPort();
  await assert.rejects(nodeFetch(`http://127.0.0.1:${port}/`), (error: Error) => {
    assert.ok(error instanceof TypeError);
    assert.equal(error.message, 'fetch failed');
    assert.equal((error.cause as { code?: string }).code, 'ECONNREFUSED');
    return true;
  });
});

test('a connection cut mid-body errors the body with ECONNRESET (retryable for the AI SDK)', async () => {
  const response = await nodeFetch(`${origin}/cut`);
  assert.equal(response.status, 200);
  await assert.rejects(response.text(), (error: Error & { code?: string }) => error.code === 'ECONNRESET');
});

test('an abort before the answer rejects with the signal reason', async () => {
  const started = Date.now();
  await assert.rejects(nodeFetch(`${origin}/slow`, { signal: AbortSignal.timeout(100) }), (error: Error) => error.name === 'TimeoutError');
  assert.ok(Date.now() - started < 1_000);
  const aborted = AbortSignal.abort();
  await assert.rejects(nodeFetch(`${origin}/echo`, { signal: aborted }), (error: Error) => error.name === 'AbortError');
});

test('an abort during the body errors the body with the signal reason', async () => {
  const controller = new AbortController();
  const response = await nodeFetch(`${origin}/slow-body`, { signal: controller.signal });
  const text = response.text();
  controller.abort();
  await assert.rejects(text, (error: Error) => error.name === 'AbortError');
});

test('the abort listener goes once the body is read: a long-lived signal does not gather one per call', async () => {
  const signal = new AbortController().signal;
  for (let i = 0; i < 3; i++) await (await nodeFetch(`${origin}/echo`, { signal })).arrayBuffer();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(getEventListeners(signal, 'abort').length, 0);
});

// `send`: the same calls answered as node:http answers (status, headers, the decoded body stream), over undici.
const client = createNodeHttpClient();
const sent = (path: string, signal?: AbortSignal) => client.send(new URL(`${origin}${path}`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sea":1}', signal });
const textOf = (body: Readable) => new Promise<string>((resolve, reject) => {
  const chunks: Buffer[] = [];
  body.on('data', (chunk: Buffer) => chunks.push(chunk)).once('end', () => resolve(Buffer.concat(chunks).toString('utf8'))).once('error', reject);
});

test('send: the status, the headers and the body, which asks for what it decodes', async () => {
  const answer = await sent('/echo');
  assert.equal(answer.status, 201);
  assert.equal(answer.headers['x-custom'], 'yes');
  const echoed = JSON.parse(await textOf(answer.body)) as { method: string; body: string; headers: Record<string, string> };
  assert.deepEqual([echoed.method, echoed.body, echoed.headers['accept-encoding']], ['POST', '{"sea":1}', 'gzip, deflate, br']);
  for (const path of ['/gzip', '/deflate', '/br']) assert.equal(await textOf((await sent(path)).body), TEXT, path);
});

test('send: a refused connection rejects as fetch does, TypeError("fetch failed") with the cause', async () => {
  const port = await unusedPort();
  await assert.rejects(client.send(new URL(`http://127.0.0.1:${port}/`), { method: 'POST', headers: {} }), (error: Error) => {
    assert.ok(error instanceof TypeError);
    assert.equal(error.message, 'fetch failed');
    assert.equal((error.cause as { code?: string }).code, 'ECONNREFUSED');
    return true;
  });
});

test('send: a connection cut mid-body errors the body with a network code the AI SDK retries', async () => {
  const answer = await sent('/cut');
  await assert.rejects(textOf(answer.body), (error: Error & { code?: string }) => error.code === 'UND_ERR_SOCKET');
});

test('send: an abort rejects with the signal reason before the answer, and errors the body with it during the body', async () => {
  await assert.rejects(sent('/slow', AbortSignal.timeout(100)), (error: Error) => error.name === 'TimeoutError');
  await assert.rejects(sent('/echo', AbortSignal.abort()), (error: Error) => error.name === 'AbortError');
  const controller = new AbortController();
  const answer = await sent('/slow-body', controller.signal);
  const text = textOf(answer.body);
  controller.abort();
  await assert.rejects(text, (error: Error) => error.name === 'AbortError');
});

test('send: the abort listener goes once the body is read', async () => {
  const signal = new AbortController().signal;
  for (let i = 0; i < 3; i++) await textOf((await sent('/echo', signal)).body);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(getEventListeners(signal, 'abort').length, 0);
});
