// The paying client against a real sandbox server: it pays once, returns the typed result with its
// receipt, and refuses to sign a quote above maxPrice.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from './create-client.ts';
import { MaxPriceExceededError } from './errors.ts';
import { formatUsdc, parseUsdc } from './usdc.ts';
import { startTestService } from '../../test/support/service.ts';
import { balanceOf, fundedEvmBuyerKey } from '../../test/support/sandbox-wallet.ts';
import type { RunningService } from '../service.ts';

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'] });
});
after(() => service.stop());

test('chat is paid once and returns the result with its receipt', async () => {
  const { key, address } = await fundedEvmBuyerKey(service, ['base']);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: parseUsdc('0.05') });
  const before = await balanceOf(service, 'base', address);
  const { result, receipt } = await client.chat({ model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 8 });
  assert.equal(result.model, 'local/demo-bigram');
  assert.ok(result.usage.tokens > 0);
  assert.equal(receipt.success, true);
  assert.equal(receipt.network, 'base');
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(await balanceOf(service, 'base', address), before - receipt.amount);
});

test('a quote above maxPrice is refused before anything is signed or paid', async () => {
  const { key, address } = await fundedEvmBuyerKey(service, ['base']);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: 1n });
  const before = await balanceOf(service, 'base', address);
  await assert.rejects(client.chat({ model: 'local/demo-bigram', prompt: 'Hello' }), MaxPriceExceededError);
  assert.equal(await balanceOf(service, 'base', address), before);
});

test('USDC amounts convert exactly between decimal text and atomic units', () => {
  assert.equal(parseUsdc('0.05'), 50_000n);
  assert.equal(parseUsdc('12'), 12_000_000n);
  assert.equal(parseUsdc('0.000001'), 1n);
  assert.throws(() => parseUsdc('0.0000001'));
  assert.throws(() => parseUsdc('-1'));
  assert.equal(formatUsdc(1_050_000n), '1.05');
  assert.equal(formatUsdc(3_000_000n), '3');
});
