// Payment channels in the shared PostgreSQL ledger (several instances): own tables, created if absent.
// update() runs in a transaction holding the row (SELECT ... FOR UPDATE), so instances never lose each other's writes.
// Every connection checked out has its own 'error' listener (inTransaction), and a database that cannot be reached is
// a LedgerUnavailableError (503, retry), as in the rest of the ledger.
import type pg from 'pg';
import { asLedgerError, inTransaction } from './postgres-connection.ts';
import {
  ADDED_CHANNEL_COLUMNS,
  CHANNEL_COLUMNS,
  CHARGE_COLUMNS,
  chargeFromRow,
  chargeValues,
  recordFromRow,
  rowValues,
  type ChannelCharge,
  type ChannelRecord,
  type ChannelRow,
  type ChannelStore,
  type ChargeRow,
} from './channel-store.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS channels (
    channel_id text PRIMARY KEY,
    network text NOT NULL,
    payer text NOT NULL,
    config text NOT NULL,
    charged_cumulative text NOT NULL,
    signed_max_claimable text NOT NULL,
    signature text NOT NULL,
    balance text NOT NULL,
    total_claimed text NOT NULL,
    withdraw_requested_at bigint NOT NULL,
    refund_nonce text NOT NULL,
    synced_at bigint NOT NULL,
    deposited text NOT NULL,
    refunded text NOT NULL,
    settled text NOT NULL,
    last_claim_tx text NOT NULL,
    last_refund_tx text NOT NULL,
    refund_voucher text NOT NULL DEFAULT '',
    refund_asked text NOT NULL DEFAULT '',
    refund_amount text NOT NULL DEFAULT '',
    last_request_at bigint NOT NULL,
    outstanding integer NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  CREATE INDEX IF NOT EXISTS channels_outstanding ON channels (network, outstanding, updated_at);
  CREATE INDEX IF NOT EXISTS channels_created ON channels (created_at);
  CREATE TABLE IF NOT EXISTS channel_locks (name text PRIMARY KEY, holder text NOT NULL, until bigint NOT NULL);
  ${ADDED_CHANNEL_COLUMNS.map(([column, fallback]) => `ALTER TABLE channels ADD COLUMN IF NOT EXISTS ${column} text NOT NULL DEFAULT ${fallback};`).join('\n  ')}
  CREATE TABLE IF NOT EXISTS channel_charges (
    channel_id text NOT NULL,
    cumulative text NOT NULL,
    network text NOT NULL,
    payer text NOT NULL,
    model text NOT NULL,
    amount numeric(78, 0) NOT NULL,
    request_hash text NOT NULL,
    result text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (channel_id, cumulative)
  );
  CREATE INDEX IF NOT EXISTS channel_charges_created ON channel_charges (created_at);`;

const INSERT_CHARGE = `INSERT INTO channel_charges (${CHARGE_COLUMNS.join(', ')}) VALUES (${CHARGE_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})
  ON CONFLICT (channel_id, cumulative) DO UPDATE SET ${CHARGE_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}`;

/** Serialises the CREATEs of instances starting together (CREATE TABLE IF NOT EXISTS races on the catalog). */
const SCHEMA_LOCK = 402_0003;

const UPSERT = `INSERT INTO channels (${CHANNEL_COLUMNS.join(', ')}) VALUES (${CHANNEL_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})
  ON CONFLICT (channel_id) DO UPDATE SET ${CHANNEL_COLUMNS.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`;

export class PostgresChannelStore implements ChannelStore {
  private readonly pool: pg.Pool;
  readonly singleInstance = false;

  private constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  static async open(pool: pg.Pool): Promise<PostgresChannelStore> {
    await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      await client.query(SCHEMA);
    });
    return new PostgresChannelStore(pool);
  }

  /** One statement on a pooled connection; a database that cannot be reached is a LedgerUnavailableError. */
  private async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw asLedgerError(error);
    }
  }

  async get(channelId: string): Promise<ChannelRecord | undefined> {
    const { rows } = await this.query<ChannelRow>('SELECT * FROM channels WHERE channel_id = $1', [channelId.toLowerCase()]);
    return rows[0] && recordFromRow(rows[0]);
  }

  async update(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined): Promise<ChannelRecord | undefined> {
    return this.write(channelId, change);
  }

  async commit(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined, charge: ChannelCharge): Promise<ChannelRecord | undefined> {
    return this.write(channelId, change, charge);
  }

  private write(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined, charge?: ChannelCharge): Promise<ChannelRecord | undefined> {
    const id = channelId.toLowerCase();
    return inTransaction(this.pool, async (client) => {
      // a new channel has no row to hold: the advisory lock on its id stands in for it
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [id]);
      const { rows } = await client.query<ChannelRow>('SELECT * FROM channels WHERE channel_id = $1 FOR UPDATE', [id]);
      const current = rows[0] && recordFromRow(rows[0]);
      const next = change(current);
      if (!next) return current;
      await client.query(UPSERT, rowValues({ ...next, channelId: id }));
      if (charge) await client.query(INSERT_CHARGE, chargeValues(charge));
      return { ...next, channelId: id };
    });
  }

  async chargeAt(channelId: string, cumulative: bigint): Promise<ChannelCharge | undefined> {
    const { rows } = await this.query<ChargeRow>('SELECT * FROM channel_charges WHERE channel_id = $1 AND cumulative = $2', [
      channelId.toLowerCase(),
      cumulative.toString(),
    ]);
    return rows[0] && chargeFromRow({ ...rows[0], amount: String(rows[0].amount) });
  }

  async chargeHolding(channelId: string, mediaId: string): Promise<ChannelCharge | undefined> {
    const { rows } = await this.query<ChargeRow>(
      "SELECT * FROM channel_charges WHERE channel_id = $1 AND (result::jsonb -> 'media') @> jsonb_build_array($2::text) LIMIT 1",
      [channelId.toLowerCase(), mediaId],
    );
    return rows[0] && chargeFromRow({ ...rows[0], amount: String(rows[0].amount) });
  }

  async pruneCharges(olderThan: Date, limit: number): Promise<number> {
    const outcome = await this.query(
      `DELETE FROM channel_charges WHERE (channel_id, cumulative) IN (
         SELECT c.channel_id, c.cumulative FROM channel_charges c LEFT JOIN channels ch ON ch.channel_id = c.channel_id
         WHERE c.created_at < $1 AND (ch.channel_id IS NULL OR c.cumulative::numeric <= ch.charged_cumulative::numeric)
         LIMIT $2 FOR UPDATE OF c SKIP LOCKED)`,
      [olderThan, limit],
    );
    return outcome.rowCount ?? 0;
  }

  async lock(name: string, holder: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const outcome = await this.query(
      `INSERT INTO channel_locks (name, holder, until) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
       WHERE channel_locks.until < $4 OR channel_locks.holder = excluded.holder`,
      [name.toLowerCase(), holder, now + leaseMs, now],
    );
    return outcome.rowCount === 1;
  }

  async unlock(name: string, holder: string): Promise<void> {
    await this.query('DELETE FROM channel_locks WHERE name = $1 AND holder = $2', [name.toLowerCase(), holder]);
  }

  async outstanding(network: string, limit: number): Promise<ChannelRecord[]> {
    const { rows } = await this.query<ChannelRow>(
      'SELECT * FROM channels WHERE network = $1 AND (outstanding = 1 OR withdraw_requested_at <> 0) ORDER BY updated_at LIMIT $2',
      [network, limit],
    );
    return rows.map(recordFromRow);
  }

  async unsettled(network: string, limit: number): Promise<ChannelRecord[]> {
    const { rows } = await this.query<ChannelRow>(
      'SELECT * FROM channels WHERE network = $1 AND settled <> total_claimed ORDER BY updated_at LIMIT $2',
      [network, limit],
    );
    return rows.map(recordFromRow);
  }

  async list(options: { network?: string; payer?: string; limit?: number } = {}): Promise<ChannelRecord[]> {
    const where: string[] = [];
    const values: (string | number)[] = [];
    if (options.network) {
      values.push(options.network);
      where.push(`network = $${values.length}`);
    }
    if (options.payer) {
      values.push(options.payer.toLowerCase());
      where.push(`payer = $${values.length}`);
    }
    values.push(options.limit ?? 100);
    const { rows } = await this.query<ChannelRow>(
      `SELECT * FROM channels ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(recordFromRow);
  }

  async delete(channelId: string): Promise<void> {
    await this.query('DELETE FROM channels WHERE channel_id = $1', [channelId.toLowerCase()]);
  }
}
