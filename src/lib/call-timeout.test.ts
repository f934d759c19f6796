import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { withCallTimeout } from './call-timeout.ts';

/** A call that only ends when its signal aborts (or has), with the signal's reason, as fetch does. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error));
  });

test('a call past its limit is aborted as AbortSignal.timeout aborts it: a DOMException named TimeoutError', async () => {
  const ours = await withCallTimeout(5, undefined, untilAborted).catch((error: unknown) => error);
  const platforms = await untilAborted(AbortSignal.timeout(5)).catch((error: unknown) => error);
  assert.ok(ours instanceof DOMException);
  assert.ok(platforms instanceof DOMException);
  assert.deepEqual([ours.name, ours.message, ours.code], [platforms.name, platforms.message, platforms.code]);
});

test("the caller's signal aborting first aborts the call with its reason, as AbortSignal.any would", async () => {
  const client = new AbortController();
  const reason = new Error('client gone');
  const call = withCallTimeout(60_000, client.signal, untilAborted);
  client.abort(reason);
  await assert.rejects(call, (error) => error === reason);

  const gone = AbortSignal.abort(reason);
  await assert.rejects(withCallTimeout(60_000, gone, untilAborted), (error) => error === reason);
});

test('the limit is disarmed once the call ends: its signal never aborts afterwards', async () => {
  let seen: AbortSignal | undefined;
  assert.equal(await withCallTimeout(5, undefined, async (signal) => ((seen = signal), 'done')), 'done');
  await sleep(20); // a timer of 20 ms fires after one of 5 ms would have
  assert.equal(seen!.aborted, false);
});
