import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capabilityPriceRange, modelPriceRange } from './price-range.ts';
import { embeddedModels } from '../config/embedded-models.ts';
import type { ImageModelConfig, SpeechModelConfig } from '../config/schema.ts';

const models = embeddedModels();
const image = models.find((m) => m.capability === 'image') as ImageModelConfig;
const speech = models.find((m) => m.capability === 'speech') as SpeechModelConfig;

test('an image model ranges from one image at its cheapest size to maxN at its dearest', () => {
  const model = { ...image, sizes: ['256x256', '512x512'], maxN: 3, price: { perImageBySize: { '256x256': '7', '512x512': '20' } } };
  assert.deepEqual(modelPriceRange(model, 1000), { min: 7n, max: 60n });
});

test('a capability ranges over every model of it, and is absent without one', () => {
  const cheap = { ...speech, id: 'cheap', price: { perRequest: '1', perThousandChars: '0' } };
  const dear = { ...speech, id: 'dear', maxTextLength: 1000, price: { perRequest: '100', perThousandChars: '1000' } };
  assert.deepEqual(capabilityPriceRange([cheap, dear], 'speech', 1000), { min: 1n, max: 1100n });
  assert.equal(capabilityPriceRange([cheap], 'image', 1000), undefined);
});
