// What the gateway gets of a client's request: everything the client sends about the call (versions, betas,
// its own metadata), never its credentials nor a payment header of its own, and the network the proxy pays on;
// and what the client gets: the answer as it comes, no faster than the client reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { forwardedHeaders, gatewayAt, readBody, relay } from './forward.ts';

test('the client’s API key and credentials stay with the proxy; the call’s own headers go on', () => {
  const body = Buffer.from('{"model":"m"}');
  const headers = forwardedHeaders(
    {
      host: '127.0.0.1:8402',
      authorization: 'Bearer sk-secret',
      'x-api-key': 'sk-ant-secret',
      'api-key': 'azure-secret',
      cookie: 'session=1',
      'x-goog-api-key': 'goog-secret',
      'anthropic-api-key': 'sk-ant-other',
      'x-auth-token': 'tok',
      'openai-organization': 'org-1',
      'proxy-authorization': 'Basic eA==',
      'payment-signature': 'someone-elses-payment',
      'x-payment': 'someone-elses-v1-payment',
      'x-network': 'polygon',
      'accept-encoding': 'gzip, br',
      connection: 'keep-alive',
      'content-length': '999',
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
      'x-stainless-lang': 'js',
      'user-agent': 'claude-cli/2.1.332',
    },
    'base',
    body,
    { 'payment-signature': 'the-proxys-payment' },
  );
  assert.deepEqual(headers, {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
    'x-stainless-lang': 'js',
    'user-agent': 'claude-cli/2.1.332',
    'x-network': 'base',
    'content-length': String(body.length),
    'payment-signature': 'the-proxys-payment',
  });
});

test('a client that stops reading stops the gateway’s stream too (backpressure): nothing piles up in the proxy', { timeout: 60_000 }, async () => {
  const LIMIT = 256 * 1024 * 1024;
  let written = 0;
  let ended = false;
  const upstream = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    // as fast as its socket takes it, waiting whenever it says to
    while (written < LIMIT && !res.destroyed) {
      written += chunk.length;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go).off('close', go);
            resolve();
          };
          res.on('drain', go).on('close', go);
        });
      }
    }
    ended = true;
    res.end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const gateway = gatewayAt(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  let answer: IncomingMessage | undefined;
  const front = createServer((_req, res) => {
    void gateway.send('GET', '/', {}, undefined).then((reply) => relay((answer = reply), res), () => res.destroy());
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  // a client that takes the answer's head and then reads nothing
  const client = request({ host: '127.0.0.1', port: (front.address() as AddressInfo).port, path: '/' }, (res) => res.pause());
  client.on('error', () => undefined); // destroyed below, mid-answer
  client.end();
  try {
    // the proxy stops reading the gateway once the client's socket is full, however fast the gateway writes
    while (!answer?.isPaused()) {
      assert.equal(ended, false, 'the gateway wrote its whole stream: nothing held it back');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.ok(written < LIMIT);
  } finally {
    client.destroy();
    gateway.close();
    front.closeAllConnections();
    upstream.closeAllConnections();
    await Promise.all([new Promise((resolve) => front.close(resolve)), new Promise((resolve) => upstream.close(resolve))]);
  }
});

/** A server handing each request's body to readBody(limit), and what it returned (or threw). */
async function bodyReader(limit: number) {
  const results: Array<Promise<Buffer | undefined>> = [];
  const server = createServer((req, res) => {
    const read = readBody(req, limit);
    results.push(read);
    read.then((body) => res.end(body === undefined ? 'over' : `read ${body.length}`), () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, results, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function post(port: number, chunks: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'transfer-encoding': 'chunked' } }, (answer) => {
      let text = '';
      answer.on('data', (chunk: Buffer) => (text += chunk));
      answer.on('end', () => resolve(text));
    });
    sent.on('error', reject);
    for (const chunk of chunks) sent.write(chunk);
    sent.end();
  });
}

test('a request body is read whole in its chunks, and not past the limit', async () => {
  const reader = await bodyReader(1000);
  try {
    assert.equal(await post(reader.port, [Buffer.alloc(400), Buffer.alloc(400), Buffer.alloc(200)]), 'read 1000');
    assert.equal(await post(reader.port, [Buffer.alloc(600), Buffer.alloc(600)]), 'over');
  } finally {
    await reader.close();
  }
});

test('a client that leaves in the middle of its body: the read fails instead of waiting forever', async () => {
  const reader = await bodyReader(1000);
  try {
    const socket = connect(reader.port, '127.0.0.1');
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n' + 'x'.repeat(100));
    while (reader.results.length === 0) await new Promise((resolve) => setImmediate(resolve));
    socket.destroy();
    await assert.rejects(reader.results[0]!);
  } finally {
    await reader.close();
  }
});
