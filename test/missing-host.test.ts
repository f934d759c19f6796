// A request without a Host header, sent over a raw socket (fetch always sends one): HTTP/1.1 requires Host
// (RFC 9112 section 3.2), and the answer is a JSON 400 naming the header, in the shape of the route's surface,
// on the paid routes (also on the path the paid lane answers) as on the free ones. HTTP/1.0 has no Host and is served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './support/service.ts';
import { sendRaw } from './support/raw-http.ts';
import type { RunningService } from '../src/service.ts';

let service: RunningService;
before(async () => {
  service = await startTestService();
});
after(() => service.stop());

const post = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

test('an HTTP/1.1 request to a spec route without Host is a JSON 400 naming the header (the paid lane\'s path too)', async () => {
  const answer = await sendRaw(service.url, post('/api/v1/ai/chat', JSON.stringify({ model: 'local/demo-bigram', prompt: 'hi' })));
  assert.equal(answer.status, 400);
  assert.match(answer.headers.get('content-type') ?? '', /application\/json/);
  assert.deepEqual(JSON.parse(answer.body), { error: 'the Host header is required (HTTP/1.1 requests must send one)', code: 'invalid_request', field: 'Host' });
});

test('on a free route too', async () => {
  const answer = await sendRaw(service.url, 'GET /healthz HTTP/1.1\r\n\r\n');
  assert.equal(answer.status, 400);
  assert.equal((JSON.parse(answer.body) as { field: string }).field, 'Host');
});

test('under /v1 the 400 is in OpenAI\'s shape', async () => {
  const answer = await sendRaw(service.url, post('/v1/chat/completions', '{}'));
  assert.equal(answer.status, 400);
  assert.deepEqual(JSON.parse(answer.body), {
    error: { message: 'the Host header is required (HTTP/1.1 requests must send one)', type: 'invalid_request_error', param: 'Host', code: 'invalid_request' },
  });
});

test('an HTTP/1.0 request needs no Host and is served', async () => {
  const answer = await sendRaw(service.url, 'GET /healthz HTTP/1.0\r\n\r\n');
  assert.equal(answer.status, 200);
  assert.equal((JSON.parse(answer.body) as { status: string }).status, 'ok');
});
