// What the gateway gets of a client's request: everything the client sends about the call (versions, betas,
// its own metadata), never its credentials nor a payment header of its own, and the network the proxy pays on;
// and what the client gets: the answer as it comes, no faster than the client reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardedHeaders, gatewayAt, relay } from './forward.ts';

test('the client’s API key and credentials stay with the proxy; the call’s own headers go on', () => {
  const body = Buffer.from('{"model":"m"}');
  const headers = forwardedHeaders(
    {
      host: '127.0.0.1:8402',
      authorization: 'Bearer sk-secret',
      'x-api-key': 'sk-ant-secret',
      'api-key': 'azure-secret',
      cookie: 'session=1',
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

test('a client that stops reading stops the gateway’s stream too (backpressure): nothing piles up in the proxy', async () => {
  const LIMIT = 256 * 1024 * 1024;
  let written = 0;
  let outcome!: (blocked: boolean) => void;
  const upstreamDone = new Promise<boolean>((resolve) => (outcome = resolve));
  const upstream = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    // writes until its socket says stop (the proxy stopped reading) or the limit, whichever first
    while (written < LIMIT) {
      written += chunk.length;
      if (!res.write(chunk)) return outcome(true);
    }
    res.end();
    outcome(false);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const gateway = gatewayAt(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  const front = createServer(async (_req, res) => void relay(await gateway.send('GET', '/', {}, undefined), res));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const client = request({ host: '127.0.0.1', port: (front.address() as AddressInfo).port, path: '/' }, (res) => res.pause());
  client.on('error', () => undefined); // destroyed below, mid-answer
  client.end();
  try {
    assert.equal(await upstreamDone, true, 'the gateway was made to wait');
    assert.ok(written < 64 * 1024 * 1024, `${written} bytes written before it had to wait`);
  } finally {
    client.destroy();
    gateway.close();
    front.closeAllConnections();
    upstream.closeAllConnections();
    await Promise.all([new Promise((resolve) => front.close(resolve)), new Promise((resolve) => upstream.close(resolve))]);
  }
});
