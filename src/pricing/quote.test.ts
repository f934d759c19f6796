import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quoteChat, quoteImages, quoteSpeech } from './quote.ts';
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
