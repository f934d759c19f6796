// What Responses answers leave behind (item_reference, previous_response_id): found by id until an hour old, the
// oldest out first past the size bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeptById } from './kept-items.ts';

const text = (size: number, letter = 'x') => ({ text: letter.repeat(size) });

test('a value is found by its id until its time is up', () => {
  const kept = new KeptById<{ text: string }>(1_000, 1_000_000);
  kept.keep('msg_a', { text: 'hello' }, 0);
  assert.equal(kept.get('msg_a', 999)?.text, 'hello');
  assert.equal(kept.get('msg_a', 1_000), undefined);
  assert.equal(kept.get('msg_b', 0), undefined);
});

test('past the size bound the oldest values go first; a value larger than the bound is not kept', () => {
  const one = JSON.stringify(text(100)).length;
  const kept = new KeptById<{ text: string }>(60_000, 2 * one);
  kept.keep('msg_1', text(100), 0);
  kept.keep('msg_2', text(100, 'y'), 0);
  kept.keep('msg_3', text(100, 'z'), 1);
  assert.deepEqual(['msg_1', 'msg_2', 'msg_3'].map((id) => kept.get(id, 2) !== undefined), [false, true, true]);
  kept.keep('msg_big', text(10 * one, 'w'), 3);
  assert.equal(kept.get('msg_big', 4), undefined);
  assert.ok(kept.get('msg_3', 4));
});

test('an id kept again holds its new value, counted once', () => {
  const one = JSON.stringify(text(100)).length;
  const kept = new KeptById<{ text: string }>(60_000, 2 * one);
  kept.keep('resp_1', text(100), 0);
  kept.keep('resp_1', text(100, 'y'), 1);
  kept.keep('resp_2', text(100, 'z'), 2);
  assert.equal(kept.get('resp_1', 3)?.text[0], 'y');
  assert.ok(kept.get('resp_2', 3));
});
