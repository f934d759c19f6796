// What the logs hold of calls to /v1/responses and /v1/messages: the API keys the SDKs send (x-api-key,
// Authorization) are never read nor logged, and an upstream failure is logged without the prompt or anything
// the model produced, whichever surface the call came through.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { until } from './support/sse.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const PROMPT = 'my secret diary entry about zebras';
const GENERATED = 'generated words about penguins';
const KEY = 'sk-ant-api03-SECRETKEYSECRETKEY';
let upstream: Server;
let gateway: ChildService;

before(async () => {
  // an upstream that fails every call with a body quoting generated content
  upstream = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad', partial: GENERATED } })));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  gateway = await startChildService({
    logLevel: 'info',
    sandbox: { enabled: true, networks: ['base'] },
    providers: { up: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, maxRetries: 0 } },
    models: [{ id: 'up/chat', provider: 'up', upstreamModel: 'm', capability: 'chat', maxTokens: 64, defaultMaxTokens: 16, price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } }],
  });
});
after(async () => {
  await gateway.stop();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

test('a paid call failing upstream on each surface: a 502 in the surface’s shape, no key, prompt or content in the logs', async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await postJson(`${gateway.url}/sandbox/faucet`, { network: 'base', address: buyer.address });
  const calls: { path: string; body: unknown; headers: Record<string, string> }[] = [
    { path: '/v1/messages', body: { model: 'up/chat', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] }, headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' } },
    { path: '/v1/responses', body: { model: 'up/chat', input: PROMPT }, headers: { Authorization: `Bearer ${KEY}` } },
  ];
  for (const { path, body, headers } of calls) {
    const quote = await postJson(`${gateway.url}${path}`, body, { 'X-Network': 'base', ...headers });
    assert.equal(quote.status, 402);
    const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    const response = await postJson(`${gateway.url}${path}`, body, { 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453), ...headers });
    assert.equal(response.status, 502);
    const error = (await response.json()) as Record<string, any>;
    if (path === '/v1/messages') assert.equal(error.type, 'error');
    assert.match(error.error.message, /nothing was charged/);
  }
  await until('both failures to be logged', () => gateway.logs.filter((line) => line.status === 502).length >= 2);
  const logged = JSON.stringify(gateway.logs);
  assert.ok(!logged.includes('SECRETKEY'), 'no API key in the logs');
  assert.ok(!logged.includes('zebras'), 'no prompt in the logs');
  assert.ok(!logged.includes('penguins'), 'no generated content in the logs');
});
