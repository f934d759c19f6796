import { test } from 'node:test';
import assert from 'node:assert/strict';
import { priceInUsdc, priceText } from './price-text.ts';

test('prices in decimal USDC, exactly, beside the atomic units', () => {
  assert.deepEqual(priceInUsdc({ perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '1' }), {
    perRequest: '0.001',
    perThousandOutputTokens: '0.002',
    perThousandInputChars: '0.000001',
  });
  assert.deepEqual(priceInUsdc({ perImageBySize: { '256x256': '2000', '1024x1024': '12345678901234567' } }), {
    perImageBySize: { '256x256': '0.002', '1024x1024': '12345678901.234567' },
  });
});

test('one line a person reads, per capability', () => {
  assert.equal(
    priceText({ capability: 'chat', price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '500' } }),
    '0.001 USDC per request + 0.002 USDC per 1,000 max_tokens + 0.0005 USDC per 1,000 prompt characters',
  );
  assert.equal(
    priceText({ capability: 'image', price: { perImageBySize: { '256x256': '2000', '512x512': '5000' } } }),
    '256x256: 0.002 USDC, 512x512: 0.005 USDC per image',
  );
  assert.equal(priceText({ capability: 'speech', price: { perRequest: '0', perThousandChars: '1000000' } }), '0 USDC per request + 1 USDC per 1,000 characters');
});
