// The benchmarks' lean connection (bench/lean-connection.ts) reads each answer to its end, and hands back its head,
// whatever framing the server chose: a Content-Length body, a chunked one, an answer with no body, and a server that closes after
// answering. A connection that mis-read an answer's end would count a request twice or hang the loop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { headerIn, LeanConnection, requestBytes } from '../bench/lean-connection.ts';
import { jsonRequest } from '../bench/load.ts';

let server: Server;
let origin: URL;
const seen: { path: string; body: string; socket: number }[] = [];
const sockets = new Map<object, number>();

before(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (!sockets.has(request.socket)) sockets.set(request.socket, sockets.size);
      seen.push({ path: request.url!, body: Buffer.concat(chunks).toString(), socket: sockets.get(request.socket)! });
      if (request.url === '/length') response.writeHead(402, { 'Content-Length': '5', 'PAYMENT-REQUIRED': 'e30=' }).end('hello');
      else if (request.url === '/chunked') {
        response.writeHead(200, { 'Content-Type': 'text/plain' });
        response.write('a'.repeat(70_000)); // several reads, several chunks
        setImmediate(() => response.end('tail'));
      } else if (request.url === '/empty') response.writeHead(204).end();
      else response.writeHead(200, { Connection: 'close', 'Content-Length': '2' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
after(() => server.close());

test('answers of every framing are read to their end, on one kept-alive connection until the server closes it', async () => {
  const connection = new LeanConnection(origin);
  const send = async (path: string) => (await connection.send(requestBytes(origin, jsonRequest(path, { prompt: path })))).status;
  try {
    const { status, head } = await connection.send(requestBytes(origin, jsonRequest('/length', { prompt: '/length' })));
    assert.equal(status, 402);
    assert.equal(headerIn(head, 'Payment-Required'), 'e30=');
    assert.equal(headerIn(head, 'X-Absent'), undefined);
    assert.equal(await send('/chunked'), 200);
    assert.equal(await send('/empty'), 204);
    assert.equal(await send('/length'), 402);
    assert.equal(await send('/close'), 200);
    assert.equal(await send('/length'), 402);
  } finally {
    connection.close();
  }
  assert.deepEqual(
    seen.map(({ path, body, socket }) => [path, JSON.parse(body).prompt, socket]),
    [
      ['/length', '/length', 0],
      ['/chunked', '/chunked', 0],
      ['/empty', '/empty', 0],
      ['/length', '/length', 0],
      ['/close', '/close', 0],
      ['/length', '/length', 1], // a new connection after the server's close
    ],
  );
});

test('an answer comes with its body, and with when its body first held a marker (a streamed first token)', async () => {
  const connection = new LeanConnection(origin);
  try {
    const whole = await connection.send(requestBytes(origin, jsonRequest('/length', {})));
    assert.equal(whole.body.toString(), 'hello');
    assert.equal(whole.markerAt, undefined);
    let told = 0;
    const sent = performance.now();
    const streamed = await connection.send(requestBytes(origin, jsonRequest('/chunked', {})), Buffer.from('tail'), () => told++);
    assert.ok(streamed.markerAt !== undefined && streamed.markerAt >= sent, 'the marker was seen after the request went out');
    assert.equal(told, 1, 'told once, when seen');
    assert.ok(streamed.body.toString().includes('tail'));
  } finally {
    connection.close();
  }
});
