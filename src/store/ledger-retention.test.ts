// Ledger retention on a real SQLite ledger: old final rows go (in several batches), in-flight and recent rows stay;
// so do old payment identifiers.
// (Both engines' pruneFinal is covered by the shared suite in ledger.test.ts; this is the timer around it.)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteLedger } from './sqlite-ledger.ts';
import { startLedgerRetention } from './ledger-retention.ts';
import type { NewPayment, PaymentState } from './ledger.ts';

const quiet = { info() {}, warn() {}, debug() {} };
const DAY = 24 * 60 * 60 * 1000;
const dir = mkdtempSync(join(tmpdir(), 'x402-ledger-retention-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let serial = 0;
function payment(): NewPayment {
  serial++;
  return {
    key: `k${serial}`,
    network: 'base',
    payer: '0xpayer',
    amount: '1000',
    asset: '0xasset',
    payTo: '0xpayto',
    resource: 'http://127.0.0.1/api/v1/ai/images',
    model: 'preview-image',
    requestHash: `h${serial}`,
    payload: {},
    requirements: {},
  };
}

async function rows(ledger: SqliteLedger, state: PaymentState, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = payment();
    await ledger.reserve(p);
    // a settled payment has its result (one without is owed a refund, and is kept)
    if (state !== 'reserved') await ledger.transition(p.key, ['reserved'], { state, ...(state === 'settled' ? { result: { status: 200, body: {}, media: [] } } : {}) });
    keys.push(p.key);
  }
  return keys;
}

function age(path: string, keys: string[], days: number): void {
  const db = new DatabaseSync(path);
  const at = new Date(Date.now() - days * DAY).toISOString();
  const update = db.prepare('UPDATE payments SET created_at = ?, updated_at = ? WHERE key = ?');
  db.exec('BEGIN');
  for (const key of keys) update.run(at, at, key);
  db.exec('COMMIT');
  db.close();
}

test('prunes old final rows at startup, batch after batch; in-flight and recent rows stay', async () => {
  const path = join(dir, 'ledger.db');
  const ledger = new SqliteLedger(path);
  const oldSettled = await rows(ledger, 'settled', 2_300); // more than two DELETE batches
  const oldFailed = await rows(ledger, 'failed', 3);
  const oldReleased = await rows(ledger, 'released', 3);
  const oldInFlight = [...(await rows(ledger, 'reserved', 2)), ...(await rows(ledger, 'verified', 2)), ...(await rows(ledger, 'pending', 2))];
  const recentSettled = await rows(ledger, 'settled', 3);
  age(path, [...oldSettled, ...oldFailed, ...oldReleased, ...oldInFlight], 91);
  const almost = await rows(ledger, 'settled', 2);
  age(path, almost, 89);

  const retention = startLedgerRetention(ledger, 90, quiet, { intervalMs: 60_000 });
  assert.equal(await retention.pruneNow(), 2_306, 'the startup prune is shared, and deletes every old final row');
  assert.equal(await retention.pruneNow(), 0);
  await retention.stop();
  for (const key of [...oldSettled.slice(0, 3), ...oldFailed, ...oldReleased]) assert.equal(await ledger.get(key), undefined);
  for (const key of [...oldInFlight, ...recentSettled, ...almost]) assert.ok(await ledger.get(key), `${key} stays`);
  await ledger.close();
});

test('payment identifiers bound before the retention period go too; recent ones stay bound', async () => {
  const path = join(dir, 'ids.db');
  const ledger = new SqliteLedger(path);
  const held = { key: 'base:0xasset:0xpayer:0xheld', network: 'base', payer: '0xpayer', amount: '1', asset: '0xasset', payTo: '0xpayto', resource: 'r', model: 'm', requestHash: 'h', payload: {}, requirements: {} };
  await ledger.reserve(held);
  for (const id of ['pay_old_one_0123456789', 'pay_old_two_0123456789', 'pay_recent_0123456789']) await ledger.bindPaymentId(id, `hash-${id}`, held.key);
  const db = new DatabaseSync(path);
  db.prepare('UPDATE payment_ids SET created_at = ? WHERE id LIKE ?').run(new Date(Date.now() - 91 * DAY).toISOString(), 'pay_old_%');
  db.close();

  const retention = startLedgerRetention(ledger, 90, quiet, { intervalMs: 60_000 });
  assert.equal(await retention.pruneNow(), 2);
  await retention.stop();
  assert.equal(await ledger.bindPaymentId('pay_recent_0123456789', 'hash-other', held.key), 'hash-pay_recent_0123456789');
  assert.equal(await ledger.bindPaymentId('pay_old_one_0123456789', 'hash-other', held.key), 'hash-other', 'forgotten, so bound afresh');
  await ledger.close();
});

test('0 days keeps ledger rows forever', async () => {
  const path = join(dir, 'forever.db');
  const ledger = new SqliteLedger(path);
  const keys = await rows(ledger, 'settled', 2);
  age(path, keys, 10_000);
  const retention = startLedgerRetention(ledger, 0, quiet, { intervalMs: 10 });
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(await retention.pruneNow(), 0);
  await retention.stop();
  for (const key of keys) assert.ok(await ledger.get(key));
  await ledger.close();
});
