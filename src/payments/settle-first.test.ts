import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settlesFirst } from './settle-first.ts';

test('a settle-first rule names a capability, a network, or both', () => {
  assert.equal(settlesFirst(['image'], 'base', 'image'), true);
  assert.equal(settlesFirst(['image'], 'solana', 'speech'), false);
  assert.equal(settlesFirst(['solana'], 'solana', 'chat'), true);
  assert.equal(settlesFirst(['solana'], 'solana-devnet', 'chat'), false, 'a network rule is that network only');
  assert.equal(settlesFirst(['solana:image'], 'solana', 'image'), true);
  assert.equal(settlesFirst(['solana:image'], 'solana', 'chat'), false);
  assert.equal(settlesFirst(['solana:image'], 'base', 'image'), false);
  assert.equal(settlesFirst([], 'base', 'chat'), false);
});
