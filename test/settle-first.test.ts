// Settle-first (config.settleFirst): the payment settles before the work runs. If the work then fails,
// the buyer is told so, and the same proof runs the work again at no further charge. A rule may name a
// network: here speech settles first on base only, and polygon keeps settling after the result exists.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { silentMp3 } from './support/openai-upstream.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

/** An OpenAI-compatible speech upstream that fails until told to work. */
let upstreamWorks = false;
let upstream: Server;
let service: RunningService;
const BODY = { model: 'flaky-tts', text: 'Settled first, spoken later.' };
const MP3 = silentMp3(3);

before(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    if (!upstreamWorks) return void res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":{"message":"down"}}');
    res.writeHead(200, { 'Content-Type': 'audio/mpeg' }).end(MP3);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as AddressInfo).port;
  service = await startTestService({
    networks: ['base', 'polygon'],
    config: {
      settleFirst: ['base:speech'],
      providers: { flaky: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeoutMs: 5000 } },
      models: [
        ...embeddedModels(),
        { id: 'flaky-tts', capability: 'speech', provider: 'flaky', upstreamModel: 'tts-1', voices: ['alloy'], defaultVoice: 'alloy', maxTextLength: 1000, price: { perRequest: '3000', perThousandChars: '0' } },
      ],
    },
  });
});
after(async () => {
  await service.stop();
  await new Promise((resolve) => upstream.close(resolve));
});

test('on a network the rule does not name, failing work is not charged (settled only after the result)', async () => {
  const buyer = await fundedEvmBuyer(service, ['polygon']);
  const quote = await postJson(`${service.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'polygon' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const proof = await signEvmProof(buyer, requirement, 137);
  const before = await balanceOf(service, 'polygon', buyer.address);
  const failed = await postJson(`${service.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'polygon', 'X-PAYMENT': proof });
  assert.equal(failed.status, 502);
  assert.doesNotMatch(((await failed.json()) as { error: string }).error, /payment is settled/);
  assert.equal(await balanceOf(service, 'polygon', buyer.address), before);
});

test('work failing after a settle-first payment is rerun by the same proof, charged once', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const quote = await postJson(`${service.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'base' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const proof = await signEvmProof(buyer, requirement, 8453);
  const before = await balanceOf(service, 'base', buyer.address);

  const failed = await postJson(`${service.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
  assert.equal(failed.status, 502);
  assert.match(((await failed.json()) as { error: string }).error, /payment is settled: retry with the same X-PAYMENT/);
  assert.equal(await balanceOf(service, 'base', buyer.address), before - 3000n, 'settled before the work');

  upstreamWorks = true;
  const rerun = await postJson(`${service.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
  assert.equal(rerun.status, 200);
  const { audioUrl } = (await rerun.json()) as { audioUrl: string };
  assert.deepEqual(Buffer.from(await (await fetch(audioUrl)).arrayBuffer()), MP3);
  assert.equal(await balanceOf(service, 'base', buyer.address), before - 3000n, 'charged once');
});
