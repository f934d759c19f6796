// The outcome recorder keeps writing a settlement's outcome while the ledger cannot be written: the request gets
// the write's answer when the database comes back within its wait, else undefined while the writes go on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { OutcomeRecorder } from './outcome-recorder.ts';
import { LedgerUnavailableError } from '../store/ledger.ts';

const log = pino({ level: 'silent' });

/** A write that fails as an unreachable database does while `down` says so. */
function ledgerWrite(state: { down: boolean; writes: number; landed: boolean }) {
  return async (): Promise<boolean> => {
    state.writes++;
    if (state.down) throw new LedgerUnavailableError(new Error('connect ECONNREFUSED'));
    state.landed = true;
    return true;
  };
}

test('the database back within the wait: the request gets the write answer', async () => {
  const state = { down: true, writes: 0, landed: false };
  const recorder = new OutcomeRecorder(log, { waitMs: 60_000, everyMs: 5 });
  const recording = recorder.record('k1', ledgerWrite(state), 'a settlement outcome');
  while (state.writes < 3) await sleep(5);
  state.down = false;
  assert.equal(await recording, true);
  assert.ok(state.landed);
});

test('still down when the wait ends: undefined for the request, and the write lands once the database is back', async () => {
  const state = { down: true, writes: 0, landed: false };
  const recorder = new OutcomeRecorder(log, { waitMs: 50, everyMs: 5 });
  assert.equal(await recorder.record('k2', ledgerWrite(state), 'a settlement outcome'), undefined);
  assert.equal(state.landed, false);
  state.down = false;
  while (!state.landed) await sleep(5);
});

test('a write that answers false (reconciliation moved the row first) is an answer, not a failure', async () => {
  const recorder = new OutcomeRecorder(log, { waitMs: 60_000, everyMs: 5 });
  assert.equal(await recorder.record('k3', async () => false, 'a settlement outcome'), false);
});
