import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { TurnWrites } from './turn-writes.ts';

const notExpected = (error: unknown) => assert.fail(`a write failed: ${String(error)}`);

test('the writes queued in a turn run after it, together and in order', async () => {
  const writes = new TurnWrites();
  const done: string[] = [];
  writes.queue(() => done.push('first'), notExpected);
  await Promise.resolve(); // a call answered in a microtask of the same turn
  writes.queue(() => done.push('second'), notExpected);
  assert.equal(done.length, 0, 'nothing is written before the turn ends');
  await nextTurn();
  assert.deepEqual(done, ['first', 'second']);

  writes.queue(() => done.push('next turn'), notExpected);
  await nextTurn();
  assert.deepEqual(done, ['first', 'second', 'next turn']);
});

test('a write that throws is handed to its own failure handler, and the others are still written', async () => {
  const writes = new TurnWrites();
  const done: string[] = [];
  const failures: unknown[] = [];
  writes.queue(() => {
    throw new Error('socket gone');
  }, (error) => failures.push(error));
  writes.queue(() => done.push('after'), notExpected);
  await nextTurn();
  assert.deepEqual(done, ['after']);
  assert.equal((failures[0] as Error).message, 'socket gone');
});
