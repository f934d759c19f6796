import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMediaRetention } from './media-retention.ts';
import type { MediaStore } from './media-store.ts';

const quiet = { info() {}, warn() {}, debug() {} };
const DAY = 24 * 60 * 60 * 1000;

function fakeStore(): MediaStore & { cutoffs: Date[]; fail: boolean } {
  const store = {
    cutoffs: [] as Date[],
    fail: false,
    put: async () => assert.fail('not used'),
    info: async () => undefined,
    read: async () => assert.fail('not used'),
    delete: async () => undefined,
    async pruneOlderThan(cutoff: Date) {
      store.cutoffs.push(cutoff);
      if (store.fail) throw new Error('store down');
      return 2;
    },
  };
  return store;
}

test('prunes at startup and on every tick, with the cutoff retention days ago', async () => {
  const store = fakeStore();
  const now = new Date('2030-01-31T12:00:00Z');
  const retention = startMediaRetention(store, 30, quiet, { intervalMs: 30, now: () => now });
  assert.equal(store.cutoffs.length, 1, 'pruned at startup');
  assert.equal(store.cutoffs[0]!.getTime(), now.getTime() - 30 * DAY);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(store.cutoffs.length >= 3, `ticks: ${store.cutoffs.length}`);
  await retention.stop();
  const count = store.cutoffs.length;
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.equal(store.cutoffs.length, count, 'nothing after stop');
});

test('a failing prune is logged and retried at the next tick', async () => {
  const store = fakeStore();
  store.fail = true;
  const warnings: unknown[] = [];
  const retention = startMediaRetention(store, 1, { ...quiet, warn: (...args: unknown[]) => warnings.push(args) }, { intervalMs: 20 });
  await new Promise((resolve) => setTimeout(resolve, 70));
  assert.ok(warnings.length >= 2);
  store.fail = false;
  assert.equal(await retention.pruneNow(), 2);
  await retention.stop();
});

test('0 days keeps media forever: no prune at all', async () => {
  const store = fakeStore();
  const retention = startMediaRetention(store, 0, quiet, { intervalMs: 10 });
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(await retention.pruneNow(), 0);
  assert.equal(store.cutoffs.length, 0);
  await retention.stop();
});
