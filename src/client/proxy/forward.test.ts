// What the gateway gets of a client's request: everything the client sends about the call (versions, betas,
// its own metadata), never its credentials nor a payment header of its own, and the network the proxy pays on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forwardedHeaders } from './forward.ts';

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
