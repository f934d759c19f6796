// /metrics after real paid calls on sandbox chains: the payment series count exactly what happened (verified,
// refused, settled, pending then reconciled), the amount settled is the sum of the receipts, the latency
// histograms saw each call, and /metrics can require a bearer token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey } from 'viem/accounts';
import { startTestService } from './support/service.ts';
import { fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import { createClient, GatewayError, parseUsdc } from '../src/client/index.ts';
import type { RunningService } from '../src/service.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let service: RunningService;
before(async () => {
  // settlement gives up waiting after 3 s: the pending case holds Solana blocks back, so it cannot land before
  service = await startTestService({ networks: ['base', 'solana'], config: { settlementTimeoutMs: 3_000 } });
});
after(() => service.stop());

/** every sample of the scrape as { name, labels, value } */
async function scrape(headers: Record<string, string> = {}): Promise<{ name: string; labels: Record<string, string>; value: number }[]> {
  const response = await fetch(`${service.url}/metrics`, { headers });
  assert.equal(response.status, 200);
  const samples = [];
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** the value of the one sample with this name and (at least) these labels; 0 when there is none */
function value(samples: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

const CHAT = 'local/demo-bigram';
const base = { network: 'base', scheme: 'exact', model: CHAT };

test('after paid calls, the payment series count them by network, scheme and model', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: buyer.key, maxPrice: parseUsdc('0.10') });
  const before = await scrape();

  const first = await client.chat({ model: CHAT, prompt: 'Hello', max_tokens: 4 });
  const second = await client.chat({ model: CHAT, prompt: 'Hello again, at more length', max_tokens: 8 });
  const image = await client.images({ prompt: 'a lighthouse', size: '256x256' });
  // a buyer with no USDC: the facilitator refuses the proof, nothing settles
  const broke = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: generatePrivateKey(), maxPrice: parseUsdc('0.10') });
  await assert.rejects(broke.chat({ model: CHAT, prompt: 'Hello', max_tokens: 4 }), GatewayError);

  const now = await scrape();
  const delta = (name: string, labels: Record<string, string>) => value(now, name, labels) - value(before, name, labels);
  assert.equal(delta('x402_payments_total', { ...base, outcome: 'verified' }), 2);
  assert.equal(delta('x402_payments_total', { ...base, outcome: 'settled' }), 2);
  assert.equal(delta('x402_payments_total', { ...base, outcome: 'invalid' }), 1);
  assert.equal(delta('x402_payments_total', { ...base, outcome: 'failed' }), 0);
  assert.equal(delta('x402_payments_total', { ...base, outcome: 'pending' }), 0);
  const imageLabels = { network: 'base', scheme: 'exact', model: 'preview-image' };
  assert.equal(delta('x402_payments_total', { ...imageLabels, outcome: 'settled' }), 1);
  assert.equal(delta('x402_settled_amount_atomic_total', base), Number(first.receipt.amount + second.receipt.amount));
  assert.equal(delta('x402_settled_amount_atomic_total', imageLabels), Number(image.receipt.amount));
  // latency: every verification and settlement timed once, by outcome
  const bucketless = { network: 'base', scheme: 'exact' };
  assert.equal(delta('x402_payment_verify_duration_seconds_count', { ...bucketless, outcome: 'valid' }), 3);
  assert.equal(delta('x402_payment_verify_duration_seconds_count', { ...bucketless, outcome: 'invalid' }), 1);
  assert.equal(delta('x402_payment_settle_duration_seconds_count', { ...bucketless, outcome: 'settled' }), 3);
  assert.ok(delta('x402_payment_settle_duration_seconds_sum', { ...bucketless, outcome: 'settled' }) > 0);
  // generation latency per model: the refused payment never ran the model
  assert.equal(delta('generation_duration_seconds_count', { capability: 'chat', model: CHAT, outcome: 'success' }), 2);
  assert.equal(delta('generation_duration_seconds_count', { capability: 'image', model: 'preview-image', outcome: 'success' }), 1);
  assert.equal(value(now, 'x402_reconciler_backlog'), 0);
});

test('a settlement of unknown outcome counts as pending and in the backlog until the reconciler settles it', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const mining = service.sandbox!.chains.get('solana')!.mining!;
  const client = createClient({ baseUrl: service.url, network: 'solana', solanaSecretKey: buyer.secretKey, maxPrice: parseUsdc('0.10'), pendingRetries: 0 });
  const sol = { network: 'solana', scheme: 'exact', model: CHAT };
  const before = await scrape();
  await mining.setAutomine(false);
  try {
    await assert.rejects(client.chat({ model: CHAT, prompt: 'Hello', max_tokens: 4 }), (error: unknown) => (error as GatewayError).code === 'settlement_pending');
    const held = await scrape();
    assert.equal(value(held, 'x402_payments_total', { ...sol, outcome: 'pending' }) - value(before, 'x402_payments_total', { ...sol, outcome: 'pending' }), 1);
    assert.equal(value(held, 'x402_payment_settle_duration_seconds_count', { network: 'solana', scheme: 'exact', outcome: 'pending' }), 1);
    assert.equal(value(held, 'x402_reconciler_backlog'), 1);
    await mining.mine();
  } finally {
    await mining.setAutomine(true);
  }
  await service.reconciler.runOnce();
  const settled = await scrape();
  const delta = (outcome: string) => value(settled, 'x402_payments_total', { ...sol, outcome }) - value(before, 'x402_payments_total', { ...sol, outcome });
  assert.equal(delta('settled'), 1, 'the reconciler counts the settlement it found');
  assert.equal(delta('verified'), 1);
  assert.ok(value(settled, 'x402_settled_amount_atomic_total', sol) > value(before, 'x402_settled_amount_atomic_total', sol));
  assert.equal(value(settled, 'x402_reconciler_backlog'), 0);
});

test('with a metrics token configured, /metrics needs it as a bearer token', async () => {
  // read from the environment variable metricsTokenEnv names, once, at startup
  process.env.X402_TEST_METRICS_TOKEN = METRICS_TOKEN;
  const guarded = await startTestService({ networks: ['base'], config: { metricsTokenEnv: 'X402_TEST_METRICS_TOKEN' } }).finally(() => {
    delete process.env.X402_TEST_METRICS_TOKEN;
  });
  try {
    const bare = await fetch(`${guarded.url}/metrics`);
    assert.equal(bare.status, 401);
    assert.match(bare.headers.get('www-authenticate') ?? '', /^Bearer realm="x402-ai-metrics"/);
    assert.equal(((await bare.json()) as { code: string }).code, 'unauthorized');
    const wrong = await fetch(`${guarded.url}/metrics`, { headers: { Authorization: 'Bearer not-the-metrics-token-at-all' } });
    assert.equal(wrong.status, 401);
    const right = await fetch(`${guarded.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(right.status, 200);
    assert.match(await right.text(), /^# HELP x402_payments_total /m);
    assert.equal((await fetch(`${service.url}/metrics`)).status, 200, 'without a token /metrics stays open');
  } finally {
    await guarded.stop();
  }
});
