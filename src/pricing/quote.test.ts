import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meteredChatCost, quoteChat, quoteImages, quoteSpeech } from './quote.ts';
import { embeddedModels } from '../config/embedded-models.ts';
import type { ChatModelConfig, ImageModelConfig, SpeechModelConfig } from '../config/schema.ts';

const models = embeddedModels();
const chat = models.find((m) => m.capability === 'chat') as ChatModelConfig;
const image = models.find((m) => m.capability === 'image') as ImageModelConfig;
const speech = models.find((m) => m.capability === 'speech') as SpeechModelConfig;

test('chat is priced per request, per max token and per input character, rounding up', () => {
  const model = { ...chat, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '500' } };
  assert.equal(quoteChat(model, 128, 0), 1000n + 256n);
  assert.equal(quoteChat(model, 1, 1), 1000n + 2n + 1n);
});

test('metered chat is charged for the tokens generated, from the same table, rounded up, never above the ceiling', () => {
  const model = { ...chat, price: { perRequest: '1000', perThousandOutputTokens: '2333', perThousandInputChars: '500' } };
  const ceiling = quoteChat(model, 128, 7);
  assert.equal(ceiling, 1000n + 299n + 4n); // 128 * 2.333 = 298.6 -> 299; 7 * 0.5 = 3.5 -> 4
  assert.equal(meteredChatCost(model, 11, 7, ceiling), 1000n + 26n + 4n); // 11 * 2.333 = 25.7 -> 26
  assert.equal(meteredChatCost(model, 128, 7, ceiling), ceiling, 'the whole budget costs the quote');
  assert.equal(meteredChatCost(model, 500, 7, ceiling), ceiling, 'a provider overshooting max_tokens is capped');
  assert.equal(meteredChatCost(model, 0, 0, 0n), 0n);
  const free = { ...chat, price: { perRequest: '0', perThousandOutputTokens: '0', perThousandInputChars: '0' } };
  assert.equal(meteredChatCost(free, 40, 40, quoteChat(free, 128, 40)), 0n, 'a free model settles nothing');
  assert.throws(() => meteredChatCost(model, -1, 0, ceiling), RangeError);
});

test('a price that would be fractional in dollars stays an exact integer', () => {
  // $0.0157 per request: a float conversion gives 15699.999999999998 atomic units
  const model = { ...chat, price: { perRequest: '15700', perThousandOutputTokens: '0', perThousandInputChars: '0' } };
  assert.equal(quoteChat(model, 10, 10).toString(), '15700');
});

test('images cost the size price times n', () => {
  assert.equal(quoteImages(image, '512x512', 3), 3n * BigInt(image.price.perImageBySize['512x512']!));
  assert.throws(() => quoteImages(image, '13x13', 1), /no price/);
});

test('speech grows with the text, per started thousand characters', () => {
  assert.ok(quoteSpeech(speech, 2000) > quoteSpeech(speech, 10));
  assert.equal(quoteSpeech({ ...speech, price: { perRequest: '0', perThousandChars: '1000' } }, 1), 1n);
});

test('under upto, the share of the prompt the model read from its cache is charged at cachedInputPercent', () => {
  const model = { ...chat, cachedInputPercent: 10, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '1000' } };
  const ceiling = quoteChat(model, 100, 1200); // 1000 + 200 + 1200
  assert.equal(meteredChatCost(model, 10, 1200, ceiling), 1000n + 20n + 1200n, 'no cache report: the full prompt price');
  // 1000 of 1200 tokens cached: 1200 * (200 + 1000 * 0.1) / 1200 = 300
  assert.equal(meteredChatCost(model, 10, 1200, ceiling, { inputTokens: 1200, cachedInputTokens: 1000 }), 1000n + 20n + 300n);
  // rounded up: 1201 * (1 + 2 * 0.1) / 3 = 480.4 -> 481
  assert.equal(meteredChatCost(model, 0, 1201, quoteChat(model, 100, 1201), { inputTokens: 3, cachedInputTokens: 2 }), 1000n + 481n);
  // a report of more cached than total tokens counts as all cached, never as a negative price
  assert.equal(meteredChatCost(model, 0, 1000, ceiling, { inputTokens: 10, cachedInputTokens: 50 }), 1000n + 100n);
  const full = { ...model, cachedInputPercent: 100 };
  assert.equal(meteredChatCost(full, 10, 1200, ceiling, { inputTokens: 1200, cachedInputTokens: 1000 }), 1000n + 20n + 1200n, 'no discount at 100%');
});
