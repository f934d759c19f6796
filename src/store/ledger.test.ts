// One behavioural suite for every Ledger engine: the embedded SQLite one and PostgreSQL (a throwaway server
// started by test/support/postgres.ts; the suite fails, it does not skip, when PostgreSQL is not installed).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Ledger, NewPayment } from './ledger.ts';
import { SqliteLedger } from './sqlite-ledger.ts';
import { PostgresLedger } from './postgres-ledger.ts';
import { openLedger } from './open-ledger.ts';
import { loadConfig } from '../config/load.ts';
import { startPostgres, type PostgresServer } from '../../test/support/postgres.ts';

let serial = 0;
function payment(overrides: Partial<NewPayment> = {}): NewPayment {
  serial++;
  return {
    key: `base:0xasset:0xpayer:0xnonce${serial}`,
    network: 'base',
    payer: '0x00000000000000000000000000000000000000aa',
    amount: '10000',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: '0x00000000000000000000000000000000000000bb',
    resource: 'http://127.0.0.1/api/v1/ai/chat',
    requestHash: `hash-${serial}`,
    payload: { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x01', n: serial } },
    requirements: { scheme: 'exact', maxAmountRequired: '10000' },
    ...overrides,
  };
}

/** Moves a fresh reservation to 'pending' the way the gate does. */
async function pendingPayment(ledger: Ledger, tx: string | null = null): Promise<NewPayment> {
  const p = payment();
  assert.deepEqual(await ledger.reserve(p), { reserved: true });
  assert.ok(await ledger.transition(p.key, ['reserved'], { state: 'verified', payer: p.payer }));
  assert.ok(await ledger.transition(p.key, ['verified'], { state: 'pending', txHash: tx, result: { status: 200, body: { ok: 1 }, media: [] } }));
  return p;
}

function ledgerSuite(name: string, open: () => Promise<Ledger>): void {
  describe(name, () => {
    let ledger: Ledger;
    beforeEach(async () => {
      await ledger?.close();
      ledger = await open();
    });
    after(async () => {
      await ledger?.close();
    });

    test('reserve: a new key is reserved and reads back as stored', async () => {
      const p = payment();
      assert.deepEqual(await ledger.reserve(p), { reserved: true });
      const stored = await ledger.get(p.key);
      assert.ok(stored);
      assert.equal(stored.state, 'reserved');
      assert.equal(stored.amount, '10000');
      assert.equal(stored.payTo, p.payTo);
      assert.deepEqual(stored.payload, p.payload);
      assert.deepEqual(stored.requirements, p.requirements);
      assert.equal(stored.txHash, null);
      assert.equal(stored.result, null);
      assert.equal(stored.leaseUntil, null);
      assert.ok(!Number.isNaN(Date.parse(stored.createdAt)));
      assert.equal(await ledger.get('no-such-key'), undefined);
    });

    test('reserve again: the existing payment comes back, untouched', async () => {
      const p = payment();
      await ledger.reserve(p);
      const again = await ledger.reserve({ ...p, requestHash: 'another-request' });
      assert.equal(again.reserved, false);
      assert.equal(!again.reserved && again.existing.state, 'reserved');
      assert.equal(!again.reserved && again.existing.requestHash, p.requestHash);
      for (const state of ['verified', 'pending', 'settled'] as const) {
        const q = payment();
        await ledger.reserve(q);
        await ledger.transition(q.key, ['reserved'], { state });
        const outcome = await ledger.reserve(q);
        assert.equal(outcome.reserved, false, `a ${state} payment cannot be reserved again`);
      }
    });

    test('re-reserve after released or failed: the proof moved no funds, so it may be used again', async () => {
      for (const state of ['released', 'failed'] as const) {
        const p = payment();
        await ledger.reserve(p);
        await ledger.transition(p.key, ['reserved'], { state, error: 'boom', txHash: '0xabc' });
        assert.deepEqual(await ledger.reserve({ ...p, requestHash: 'second-request' }), { reserved: true });
        const stored = await ledger.get(p.key);
        assert.equal(stored?.state, 'reserved');
        assert.equal(stored?.requestHash, 'second-request');
        assert.equal(stored?.error, null);
        assert.equal(stored?.txHash, null);
      }
    });

    test('transition: guarded by `from`, with its fields written', async () => {
      const p = payment();
      await ledger.reserve(p);
      assert.equal(await ledger.transition(p.key, ['verified'], { state: 'pending' }), false, 'not in the from state');
      assert.equal(await ledger.transition('no-such-key', ['reserved'], { state: 'verified' }), false);
      assert.equal(await ledger.transition(p.key, ['reserved', 'verified'], { state: 'verified', payer: '0xPAYER' }), true);
      const result = { status: 200, body: { z: 1, a: [1, 2], m: 'ü' }, media: ['m1'] };
      assert.equal(await ledger.transition(p.key, ['verified'], { state: 'pending', result }), true);
      assert.equal(await ledger.transition(p.key, ['pending'], { state: 'settled', txHash: '0xfeed' }), true);
      assert.equal(await ledger.transition(p.key, ['pending'], { state: 'failed' }), false, 'a settled payment stays settled');
      const stored = await ledger.get(p.key);
      assert.equal(stored?.state, 'settled');
      assert.equal(stored?.payer, '0xPAYER');
      assert.equal(stored?.txHash, '0xfeed');
      assert.deepEqual(stored?.result, result);
      assert.equal(JSON.stringify(stored?.result?.body), JSON.stringify(result.body), 'key order is kept for replays');
      assert.ok(Date.parse(stored!.updatedAt) >= Date.parse(stored!.createdAt));
      assert.equal(await ledger.transition(p.key, ['settled'], { state: 'settled', result: null }), true);
      assert.equal((await ledger.get(p.key))?.result, null);
    });

    test('findByTransaction', async () => {
      const p = payment();
      await ledger.reserve(p);
      await ledger.transition(p.key, ['reserved'], { state: 'settled', txHash: `0xtx${serial}` });
      assert.equal((await ledger.findByTransaction(`0xtx${serial}`))?.key, p.key);
      assert.equal(await ledger.findByTransaction('0xnothing'), undefined);
    });

    test('claimPending: a claimed row is not claimed again until its lease runs out', async () => {
      const first = await pendingPayment(ledger, '0x01');
      const second = await pendingPayment(ledger);
      const settled = await pendingPayment(ledger);
      await ledger.transition(settled.key, ['pending'], { state: 'settled' });
      await ledger.reserve(payment()); // reserved rows are not pending

      const claimed = await ledger.claimPending(10, 400);
      assert.deepEqual(claimed.map((r) => r.key), [first.key, second.key]);
      assert.ok(claimed.every((r) => r.state === 'pending' && r.leaseUntil && Date.parse(r.leaseUntil) > Date.now()));
      assert.equal(claimed[0]?.txHash, '0x01');
      assert.deepEqual(await ledger.claimPending(10, 400), [], 'both are leased');
      assert.equal((await ledger.listPending(10)).length, 2, 'listPending ignores leases');

      await sleep(450);
      const reclaimed = await ledger.claimPending(1, 60_000);
      assert.deepEqual(reclaimed.map((r) => r.key), [first.key], 'the limit is honoured, oldest first');
      assert.deepEqual((await ledger.claimPending(10, 60_000)).map((r) => r.key), [second.key]);
      assert.deepEqual(await ledger.claimPending(10, 60_000), []);
    });

    test('claimPending: rows updated within idleMs are left to the request settling them', async () => {
      const p = await pendingPayment(ledger);
      assert.deepEqual(await ledger.claimPending(10, 1_000, 60_000), []);
      await sleep(150);
      assert.deepEqual((await ledger.claimPending(10, 1_000, 100)).map((r) => r.key), [p.key]);
    });

    test('claimPending: concurrent claimers split the rows, none claimed twice', async () => {
      const keys = [];
      for (let i = 0; i < 30; i++) keys.push((await pendingPayment(ledger)).key);
      const batches = await Promise.all(Array.from({ length: 8 }, () => ledger.claimPending(5, 60_000)));
      const claimed = batches.flat().map((r) => r.key);
      assert.equal(new Set(claimed).size, claimed.length, 'no row handed out twice');
      const rest = await ledger.claimPending(100, 60_000);
      assert.deepEqual([...claimed, ...rest.map((r) => r.key)].sort(), [...keys].sort());
    });

    test('a re-reserved payment drops its old lease', async () => {
      const p = await pendingPayment(ledger);
      await ledger.claimPending(10, 60_000);
      await ledger.transition(p.key, ['pending'], { state: 'failed' });
      await ledger.reserve(p);
      assert.equal((await ledger.get(p.key))?.leaseUntil, null);
    });

    test('listStale: reserved/verified rows older than the cutoff', async () => {
      const reserved = payment();
      const verified = payment();
      await ledger.reserve(reserved);
      await ledger.reserve(verified);
      await ledger.transition(verified.key, ['reserved'], { state: 'verified' });
      await pendingPayment(ledger);
      await sleep(20);
      const stale = await ledger.listStale(new Date(), 10);
      assert.deepEqual(stale.map((r) => r.key).sort(), [reserved.key, verified.key].sort());
      assert.deepEqual(await ledger.listStale(new Date(Date.now() - 60_000), 10), []);
    });

    test('50 concurrent reservations of one key: exactly one wins', async () => {
      const p = payment();
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(p)));
      assert.equal(outcomes.filter((o) => o.reserved).length, 1);
      assert.ok(outcomes.every((o) => o.reserved || o.existing.key === p.key));
    });

    test('50 concurrent re-reservations of one released key: exactly one wins', async () => {
      const p = payment();
      await ledger.reserve(p);
      await ledger.transition(p.key, ['reserved'], { state: 'released' });
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(p)));
      assert.equal(outcomes.filter((o) => o.reserved).length, 1);
    });
  });
}

// ---- SQLite: a fresh file per test ----
const sqliteDir = mkdtempSync(join(tmpdir(), 'x402-ledger-test-'));
let sqliteFiles = 0;
after(() => rmSync(sqliteDir, { recursive: true, force: true }));
ledgerSuite('SqliteLedger', async () => new SqliteLedger(join(sqliteDir, `ledger-${++sqliteFiles}.db`)));

// ---- PostgreSQL: one throwaway server, a fresh database per test ----
let postgres: PostgresServer | undefined;
before(async () => {
  postgres = await startPostgres();
});
after(() => postgres?.stop());
ledgerSuite('PostgresLedger', async () => {
  if (!postgres) throw new Error('the PostgreSQL test server did not start');
  return PostgresLedger.open({ connectionString: await postgres.createDatabase() });
});

describe('SQLite migrations', () => {
  test('a database made by the first migration is upgraded in place (lease column added)', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const path = join(sqliteDir, 'old.db');
    const old = new SqliteLedger(path);
    await old.close();
    // roll the file back to migration 1, as an older release left it
    const db = new DatabaseSync(path);
    db.exec("ALTER TABLE payments DROP COLUMN lease_until; DELETE FROM schema_migrations WHERE version = 2;");
    db.close();
    const upgraded = new SqliteLedger(path);
    const p = await pendingPayment(upgraded);
    assert.equal((await upgraded.claimPending(1, 1_000))[0]?.key, p.key);
    await upgraded.close();
  });
});

describe('PostgreSQL migrations', () => {
  test('instances starting together migrate once, under the advisory lock', async () => {
    const url = await postgres!.createDatabase();
    const ledgers = await Promise.all(Array.from({ length: 6 }, () => PostgresLedger.open({ connectionString: url })));
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    await client.end();
    assert.deepEqual(rows.map((r) => r.version), [1, 2]);
    await Promise.all(ledgers.map((l) => l.close()));
  });
});

describe('engine selection', () => {
  test('DATABASE_URL (or databaseUrl) selects PostgreSQL; without it, SQLite in the data dir', async () => {
    const dataDir = join(sqliteDir, 'selection');
    const url = await postgres!.createDatabase();
    const withUrl = loadConfig({ DATABASE_URL: url }, { dataDir });
    assert.equal(withUrl.databaseUrl, url);
    const shared = await openLedger(withUrl);
    assert.equal(shared.engine, 'postgres');
    assert.ok(shared.ledger instanceof PostgresLedger);
    await shared.ledger.close();
    mkdirSync(dataDir, { recursive: true });
    const embedded = await openLedger(loadConfig({}, { dataDir }));
    assert.equal(embedded.engine, 'sqlite');
    await embedded.ledger.close();
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }, {}), /postgres/);
  });
});
