// Requests too malformed to reach a route (a request-target with backslashes, a Host with a space, a request line
// Node's parser refuses, oversized headers) still get a 4xx in the one JSON error shape, and the service lives on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestService } from './support/service.ts';

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Writes bytes to the service over a plain TCP socket and reads the answer until the server closes it. */
function sendRaw(url: string, bytes: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split(/\r\n\r\n(.*)/s);
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = new Map(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.end(bytes);
  });
}

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
      { name: 'headers over the size limit', bytes: `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`, status: 431, code: 'headers_too_large' },
    ];
    for (const { name, bytes, status, code } of cases) {
      await t.test(name, async () => assertJsonError(await sendRaw(service.url, bytes), status, code));
    }
    const health = await fetch(`${service.url}/healthz`);
    assert.equal(health.status, 200);
  } finally {
    await service.stop();
  }
});
