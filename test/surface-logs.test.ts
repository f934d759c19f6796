// What the logs hold of calls to /v1/responses and /v1/messages: the API keys the SDKs send (x-api-key,
// Authorization) are never read nor logged, and an upstream failure is logged without the prompt or anything
// the model produced, whichever surface the call came through.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChildService } from './support/child-service.ts';
import { startFailingUpstreamGateway } from './support/failing-upstream.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { until } from './support/sse.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const PROMPT = 'my secret diary entry about zebras';
const GENERATED = 'generated words about penguins';
const KEY = 'sk-ant-api03-SECRETKEYSECRETKEY';
let gateway: ChildService;
let stop: (() => Promise<void>) | undefined;
before(async () => {
  ({ gateway, stop } = await startFailingUpstreamGateway(GENERATED));
});
after(() => stop?.());

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
