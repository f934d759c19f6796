// The channel store's transactions while PostgreSQL restarts: a server that ends every session (57P01
// admin_shutdown, as `pg_ctl stop -m fast` does) while updates hold connections must fail those updates as
// "unavailable", never kill the process with an unhandled 'error' event; once the server is back, updates work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres, type PostgresServer } from '../../test/support/postgres.ts';
import { PostgresChannelStore } from './postgres-channel-store.ts';
import { newChannelRecord } from './channel-store.ts';
import { LedgerUnavailableError } from './ledger.ts';

let postgres: PostgresServer;
let pool: pg.Pool;

before(async () => {
  postgres = await startPostgres();
  pool = new pg.Pool({ connectionString: await postgres.createDatabase(), max: 4, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => undefined); // idle connections: the ledger logs these
});

after(async () => {
  await pool?.end();
  await postgres?.stop();
});

const CONFIG = {
  payer: '0x0000000000000000000000000000000000000001',
  payerAuthorizer: '0x0000000000000000000000000000000000000001',
  receiver: '0x0000000000000000000000000000000000000002',
  receiverAuthorizer: '0x0000000000000000000000000000000000000002',
  token: '0x0000000000000000000000000000000000000003',
  withdrawDelay: 900,
  salt: '0x0000000000000000000000000000000000000000000000000000000000000000',
} as const;

test('updates holding connections while the server restarts fail as unavailable; the process lives on', async () => {
  const store = await PostgresChannelStore.open(pool);
  const id = '0x' + 'ab'.repeat(32);
  const charge = (current: Awaited<ReturnType<typeof store.get>>) => {
    const record = current ?? newChannelRecord(id, 'base', CONFIG, Date.now());
    return { ...record, chargedCumulative: record.chargedCumulative + 1n, updatedAt: Date.now() };
  };
  await store.update(id, charge);

  // four writers keep transactions open on every pooled connection until the server goes away under them
  const failures: unknown[] = [];
  const writers = Array.from({ length: 4 }, async () => {
    for (;;) {
      try {
        await store.update(id, charge);
      } catch (error) {
        failures.push(error);
        return;
      }
    }
  });
  await postgres.halt(); // an unhandled 'error' event of a checked-out client would end this test process here
  await Promise.all(writers);
  assert.equal(failures.length, 4);
  for (const failure of failures) assert.ok(failure instanceof LedgerUnavailableError, String(failure));

  await postgres.resume();
  const before = (await store.get(id))!.chargedCumulative;
  const after = await store.update(id, charge);
  assert.equal(after!.chargedCumulative, before + 1n);
});
