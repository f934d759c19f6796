import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { writeTrustedHead } from './trusted-head.ts';

const HEADERS: [string, string][] = [
  ['X-Request-Id', 'abc-123'],
  ['PAYMENT-REQUIRED', Buffer.from('{"x402Version":2}'.repeat(300)).toString('base64')],
  ['Cache-Control', 'no-store'],
  ['Content-Type', 'application/json'],
  ['Content-Length', '2'],
];

/** The raw bytes of the answer to one keep-alive request, its Date value blanked. */
async function rawAnswer(answer: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((_request, response) => {
    answer(response);
    response.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    await once(socket, 'close');
    return text.replace(/^Date: .*$/m, 'Date: -');
  } finally {
    server.close();
  }
}

test('the head is byte for byte what writeHead writes with the same headers', async () => {
  const checked = await rawAnswer((response) => response.writeHead(402, Object.fromEntries(HEADERS)));
  const trusted = await rawAnswer((response) => writeTrustedHead(response, 402, HEADERS));
  assert.match(trusted, /^HTTP\/1\.1 402 Payment Required\r\nX-Request-Id: abc-123\r\nPAYMENT-REQUIRED: /);
  assert.equal(trusted, checked);
});

test('headers set before are kept: the head is then written the checked way', async () => {
  const trusted = await rawAnswer((response) => {
    response.setHeader('Vary', 'Origin');
    writeTrustedHead(response, 402, HEADERS);
  });
  assert.match(trusted, /\r\nVary: Origin\r\n/);
  assert.match(trusted, /\r\nX-Request-Id: abc-123\r\n/);
});
