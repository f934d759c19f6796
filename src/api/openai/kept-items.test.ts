// The output items kept for item_reference: found by id until they are an hour old, the oldest out first past
// the size bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeptItems } from './kept-items.ts';
import type { OutputItem } from './responses-schemas.ts';

const message = (id: string, text: string) =>
  ({ type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] }) as OutputItem;

test('an item is found by its id until its time is up', () => {
  const kept = new KeptItems(1_000, 1_000_000);
  kept.keep([message('msg_a', 'hello')], 0);
  assert.equal((kept.get('msg_a', 999) as { id: string }).id, 'msg_a');
  assert.equal(kept.get('msg_a', 1_000), undefined);
  assert.equal(kept.get('msg_b', 0), undefined);
});

test('past the size bound the oldest items go first; an item larger than the bound is not kept', () => {
  const one = JSON.stringify(message('msg_1', 'x'.repeat(100))).length;
  const kept = new KeptItems(60_000, 2 * one);
  kept.keep([message('msg_1', 'x'.repeat(100)), message('msg_2', 'y'.repeat(100))], 0);
  kept.keep([message('msg_3', 'z'.repeat(100))], 1);
  assert.deepEqual(['msg_1', 'msg_2', 'msg_3'].map((id) => kept.get(id, 2) !== undefined), [false, true, true]);
  kept.keep([message('msg_big', 'w'.repeat(10 * one))], 3);
  assert.equal(kept.get('msg_big', 4), undefined);
  assert.ok(kept.get('msg_3', 4));
});
