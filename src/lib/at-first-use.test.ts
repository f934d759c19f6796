import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atFirstUse } from './at-first-use.ts';

test('opened once, at the first use, and shared by every caller', async () => {
  let opened = 0;
  const thing = atFirstUse(async () => ++opened);
  assert.equal(thing.ifOpen(), undefined);
  assert.equal(await thing.settled(), undefined, 'settled() opens nothing');
  assert.equal(opened, 0);
  assert.deepEqual(await Promise.all([thing.get(), thing.get(), thing.settled()]), [1, 1, 1]);
  assert.equal(await thing.get(), 1);
  assert.equal(thing.ifOpen(), 1);
});

test('a failed opening is not kept: the next use tries again', async () => {
  let attempts = 0;
  const thing = atFirstUse(async () => {
    if (++attempts === 1) throw new Error('not yet');
    return 'open';
  });
  await assert.rejects(thing.get(), /not yet/);
  assert.equal(await thing.settled(), undefined);
  assert.equal(await thing.get(), 'open');
  assert.equal(attempts, 2);
});
