// What the logs hold: an upstream failure is logged without the user's prompt or anything the model produced
// (the AI SDK's errors carry both), and a client that hangs up mid-upload is counted apart (status 499, quiet)
// rather than as an "unhandled error" 500.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChildService } from './support/child-service.ts';
import { startFailingUpstreamGateway } from './support/failing-upstream.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const PROMPT = 'my secret diary entry about zebras';
const GENERATED = 'generated words about penguins';
let gateway: ChildService;
let stop: (() => Promise<void>) | undefined;
before(async () => {
  ({ gateway, stop } = await startFailingUpstreamGateway(GENERATED));
});
after(() => stop?.());

test('an upstream failure is logged without the prompt or the upstream\'s content', async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await postJson(`${gateway.url}/sandbox/faucet`, { network: 'base', address: buyer.address });
  const body = { model: 'up/chat', prompt: PROMPT };
  const quote = await postJson(`${gateway.url}/api/v1/ai/chat`, body, { 'X-Network': 'base' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const response = await postJson(`${gateway.url}/api/v1/ai/chat`, body, { 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453) });
  assert.equal(response.status, 502, await response.text());
  // the failure's log line, then everything logged so far
  for (;;) {
    if (gateway.logs.some((line) => line.status === 502)) break;
    await sleep(20);
  }
  const logged = JSON.stringify(gateway.logs);
  assert.ok(logged.includes('failed'), 'the failure is logged');
  assert.ok(!logged.includes('zebras'), 'no prompt in the logs');
  assert.ok(!logged.includes('penguins'), 'no generated content in the logs');
});

test('a client hanging up mid-upload is counted as 499, not logged as an unhandled 500', async () => {
  const { port } = new URL(gateway.url);
  for (let i = 0; i < 5; i++) {
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /api/v1/ai/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"model":"up/chat","prompt":"');
    await sleep(50); // let the server start reading the body
    socket.destroy();
  }
  let metrics = '';
  for (;;) {
    metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    const closed = metrics.split('\n').find((line) => line.startsWith('http_requests_total{') && line.includes('status="499"'));
    if (closed && Number(closed.split(" ").at(-1)) >= 1) break;
    assert.ok(!/status="500"/.test(metrics), metrics);
    await sleep(50);
  }
  assert.ok(!/status="500"/.test(metrics));
  assert.ok(!gateway.logs.some((line) => line.msg === 'unhandled error'));
});
