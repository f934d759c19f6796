// Requests too malformed to reach a route (a request-target with backslashes, a Host with a space, a request line
// Node's parser refuses, oversized headers, CONNECT, an unknown Expect) still get a 4xx in the one JSON error shape, and the service lives on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './support/service.ts';
import { sendRaw, type RawAnswer } from './support/raw-http.ts';

function assertJsonError(answer: RawAnswer, status: number, code: string): void {
  assert.equal(answer.status, status, `status line of: ${answer.body}`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(answer.body) as { error: unknown; code: unknown };
  assert.equal(typeof body.error, 'string');
  assert.equal(body.code, code);
}

test('malformed requests get a JSON error in the one shape and the service keeps serving', async (t) => {
  const service = await startTestService();
  try {
    const cases: { name: string; bytes: string; status: number; code: string }[] = [
      { name: 'backslashes in the path', bytes: 'GET /a\\b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', status: 400, code: 'invalid_request' },
      { name: 'a Host with a space', bytes: 'GET /healthz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n', status: 400, code: 'invalid_request' },
      { name: 'a Host that is not a host', bytes: 'POST /api/v1/ai/chat HTTP/1.1\r\nHost: a/b?c\r\nContent-Length: 0\r\nConnection: close\r\n\r\n', status: 400, code: 'invalid_request' },
      { name: 'a request line Node refuses', bytes: 'NOT AN HTTP REQUEST\r\n\r\n', status: 400, code: 'invalid_request' },
      { name: 'CONNECT (Node drops it unanswered by default)', bytes: 'CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n', status: 400, code: 'invalid_request' },
      { name: 'an Expect other than 100-continue (Node answers a bare 417)', bytes: 'POST /api/v1/ai/chat HTTP/1.1\r\nHost: localhost\r\nExpect: garbage\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}', status: 417, code: 'invalid_request' },
      { name: 'headers over the size limit', bytes: `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`, status: 431, code: 'headers_too_large' },
    ];
    for (const { name, bytes, status, code } of cases) {
      await t.test(name, async () => assertJsonError(await sendRaw(service.url, bytes), status, code));
    }
    await t.test('an Expect other than 100-continue on a 600 KB body: the 417 reaches the client still sending it', async () => {
      // closing on a client mid-body resets the connection, which can discard the answer: each of these must arrive
      const body = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
      const bytes = `POST /v1/audio/speech HTTP/1.1\r\nHost: localhost\r\nExpect: garbage\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
      const answers = await Promise.all(Array.from({ length: 24 }, () => sendRaw(service.url, bytes)));
      for (const answer of answers) assertJsonError(answer, 417, 'invalid_request');
    });
    const health = await fetch(`${service.url}/healthz`);
    assert.equal(health.status, 200);
  } finally {
    await service.stop();
  }
});
