// A connection held out of the pool while PostgreSQL restarts: the session's end (57P01 admin_shutdown, then the
// socket closing) is caught on the held client instead of killing the process, the broken connection is not
// pooled again, and the pool serves queries once the server is back. Failures that mean "unreachable" become
// LedgerUnavailableError.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startPostgres, type PostgresServer } from '../../test/support/postgres.ts';
import { asLedgerError, holdClient, isUnavailable } from './postgres-connection.ts';
import { LedgerUnavailableError } from './ledger.ts';

let postgres: PostgresServer;
let pool: pg.Pool;

before(async () => {
  postgres = await startPostgres();
  pool = new pg.Pool({ connectionString: postgres.url, max: 4, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => undefined); // idle connections: the ledger logs these
});

after(async () => {
  await pool?.end();
  await postgres?.stop();
});

test('a held connection survives the server restarting under it; the pool reconnects once it is back', async () => {
  const held = await holdClient(pool);
  assert.equal((await held.client.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1);

  await postgres.halt(); // an unhandled 'error' event here would end this test process
  for (let i = 0; i < 200 && !held.broken; i++) await sleep(10);
  assert.ok(held.broken, 'the session end was caught on the held client');
  await assert.rejects(held.client.query('SELECT 1'));
  held.release();

  await assert.rejects(
    holdClient(pool),
    (error: unknown) => error instanceof LedgerUnavailableError,
    'no server: a new connection fails as unavailable',
  );

  await postgres.resume();
  const { rows } = await pool.query<{ two: number }>('SELECT 2 AS two');
  assert.equal(rows[0]!.two, 2);
});

test('which failures mean the database is unavailable', () => {
  for (const code of ['57P01', '57P03', '08006', '08001', 'ECONNREFUSED', 'ECONNRESET', '25006']) {
    assert.equal(isUnavailable(Object.assign(new Error('x'), { code })), true, code);
  }
  assert.equal(isUnavailable(new Error('Connection terminated unexpectedly')), true);
  // a wrong statement or a constraint is a bug or a conflict, not an outage
  for (const code of ['42601', '23505', '40001']) assert.equal(isUnavailable(Object.assign(new Error('x'), { code })), false, code);
  const constraint = Object.assign(new Error('duplicate key'), { code: '23505' });
  assert.equal(asLedgerError(constraint), constraint);
  assert.ok(asLedgerError(Object.assign(new Error('x'), { code: '57P01' })) instanceof LedgerUnavailableError);
});
