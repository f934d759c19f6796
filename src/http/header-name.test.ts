import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lowerCaseName } from './header-name.ts';

test('a header name comes back in lower case, the same string each time it is asked', () => {
  assert.equal(lowerCaseName('X-Request-Id'), 'x-request-id');
  assert.equal(lowerCaseName('PAYMENT-REQUIRED'), 'payment-required');
  assert.equal(lowerCaseName('X-Request-Id'), 'x-request-id');
});

test('past the names it keeps, a name is still lowered', () => {
  for (let i = 0; i < 300; i++) assert.equal(lowerCaseName(`X-Name-${i}`), `x-name-${i}`);
  assert.equal(lowerCaseName('X-Not-Kept'), 'x-not-kept');
});
