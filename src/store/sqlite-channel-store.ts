// Payment channels in the embedded SQLite ledger (one instance): same file, own tables, created if absent.
// Statements are synchronous, so a read-change-write inside one transaction cannot interleave with another.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { preparedStatements } from './sqlite-statements.ts';
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
    channel_id TEXT PRIMARY KEY,
    network TEXT NOT NULL,
    payer TEXT NOT NULL,
    config TEXT NOT NULL,
    charged_cumulative TEXT NOT NULL,
    signed_max_claimable TEXT NOT NULL,
    signature TEXT NOT NULL,
    balance TEXT NOT NULL,
    total_claimed TEXT NOT NULL,
    withdraw_requested_at INTEGER NOT NULL,
    refund_nonce TEXT NOT NULL,
    synced_at INTEGER NOT NULL,
    deposited TEXT NOT NULL,
    refunded TEXT NOT NULL,
    settled TEXT NOT NULL,
    last_claim_tx TEXT NOT NULL,
    last_refund_tx TEXT NOT NULL,
    refund_voucher TEXT NOT NULL DEFAULT '',
    refund_asked TEXT NOT NULL DEFAULT '',
    refund_amount TEXT NOT NULL DEFAULT '',
    last_request_at INTEGER NOT NULL,
    outstanding INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS channels_outstanding ON channels (network, outstanding, updated_at);
  CREATE INDEX IF NOT EXISTS channels_created ON channels (created_at);
  CREATE TABLE IF NOT EXISTS channel_locks (name TEXT PRIMARY KEY, holder TEXT NOT NULL, until INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS channel_charges (
    channel_id TEXT NOT NULL,
    cumulative TEXT NOT NULL,
    network TEXT NOT NULL,
    payer TEXT NOT NULL,
    model TEXT NOT NULL,
    amount TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    result TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (channel_id, cumulative)
  );
  CREATE INDEX IF NOT EXISTS channel_charges_created ON channel_charges (created_at);`;

const INSERT_CHARGE = `INSERT INTO channel_charges (${CHARGE_COLUMNS.join(', ')}) VALUES (${CHARGE_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (channel_id, cumulative) DO UPDATE SET ${CHARGE_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}`;

const UPSERT = `INSERT INTO channels (${CHANNEL_COLUMNS.join(', ')}) VALUES (${CHANNEL_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (channel_id) DO UPDATE SET ${CHANNEL_COLUMNS.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`;

export class SqliteChannelStore implements ChannelStore {
  private readonly db: DatabaseSync;
  private readonly sql: (sql: string) => StatementSync;
  readonly singleInstance = true;

  /** `sql`: the ledger's prepared statements (store/sqlite-statements.ts), shared on the one connection */
  constructor(db: DatabaseSync, sql = preparedStatements(db)) {
    this.db = db;
    this.sql = sql;
    this.db.exec(SCHEMA);
    // a table from before a column was added gets it (SQLite has no ADD COLUMN IF NOT EXISTS)
    const columns = new Set((this.db.prepare('PRAGMA table_info(channels)').all() as { name: string }[]).map((c) => c.name));
    for (const [column, fallback] of ADDED_CHANNEL_COLUMNS) {
      if (!columns.has(column)) this.db.exec(`ALTER TABLE channels ADD COLUMN ${column} TEXT NOT NULL DEFAULT ${fallback}`);
    }
  }

  async get(channelId: string): Promise<ChannelRecord | undefined> {
    const row = this.sql('SELECT * FROM channels WHERE channel_id = ?').get(channelId.toLowerCase()) as ChannelRow | undefined;
    return row && recordFromRow(row);
  }

  async update(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined): Promise<ChannelRecord | undefined> {
    return this.write(channelId, change);
  }

  async commit(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined, charge: ChannelCharge): Promise<ChannelRecord | undefined> {
    return this.write(channelId, change, charge);
  }

  private write(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined, charge?: ChannelCharge): ChannelRecord | undefined {
    const id = channelId.toLowerCase();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const row = this.sql('SELECT * FROM channels WHERE channel_id = ?').get(id) as ChannelRow | undefined;
      const current = row && recordFromRow(row);
      const next = change(current);
      if (next) {
        this.sql(UPSERT).run(...rowValues({ ...next, channelId: id }));
        if (charge) this.sql(INSERT_CHARGE).run(...chargeValues(charge));
      }
      this.db.exec('COMMIT');
      return next ? { ...next, channelId: id } : current;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async lock(name: string, holder: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const result = this.sql(
      `INSERT INTO channel_locks (name, holder, until) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
       WHERE channel_locks.until < ? OR channel_locks.holder = excluded.holder`,
    )
      .run(name.toLowerCase(), holder, now + leaseMs, now);
    return Number(result.changes) === 1;
  }

  async unlock(name: string, holder: string): Promise<void> {
    this.sql('DELETE FROM channel_locks WHERE name = ? AND holder = ?').run(name.toLowerCase(), holder);
  }

  async outstanding(network: string, limit: number): Promise<ChannelRecord[]> {
    const rows = this.sql('SELECT * FROM channels WHERE network = ? AND (outstanding = 1 OR withdraw_requested_at != 0) ORDER BY updated_at LIMIT ?')
      .all(network, limit) as unknown as ChannelRow[];
    return rows.map(recordFromRow);
  }

  async unsettled(network: string, limit: number): Promise<ChannelRecord[]> {
    const rows = this.sql('SELECT * FROM channels WHERE network = ? AND settled <> total_claimed ORDER BY updated_at LIMIT ?')
      .all(network, limit) as unknown as ChannelRow[];
    return rows.map(recordFromRow);
  }

  async list(options: { network?: string; payer?: string; limit?: number } = {}): Promise<ChannelRecord[]> {
    const where: string[] = [];
    const values: (string | number)[] = [];
    if (options.network) {
      where.push('network = ?');
      values.push(options.network);
    }
    if (options.payer) {
      where.push('payer = ?');
      values.push(options.payer.toLowerCase());
    }
    const sql = `SELECT * FROM channels ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC LIMIT ?`;
    const rows = this.sql(sql).all(...values, options.limit ?? 100) as unknown as ChannelRow[];
    return rows.map(recordFromRow);
  }

  async chargeAt(channelId: string, cumulative: bigint): Promise<ChannelCharge | undefined> {
    const row = this.sql('SELECT * FROM channel_charges WHERE channel_id = ? AND cumulative = ?').get(channelId.toLowerCase(), cumulative.toString()) as
      | ChargeRow
      | undefined;
    return row && chargeFromRow(row);
  }

  async chargeHolding(channelId: string, mediaId: string): Promise<ChannelCharge | undefined> {
    const row = this.sql(
      "SELECT * FROM channel_charges WHERE channel_id = ? AND EXISTS (SELECT 1 FROM json_each(result, '$.media') WHERE value = ?) LIMIT 1",
    ).get(channelId.toLowerCase(), mediaId) as ChargeRow | undefined;
    return row && chargeFromRow(row);
  }

  async pruneCharges(olderThan: Date, limit: number): Promise<number> {
    // decimal strings without leading zeros compare as numbers by length, then text: no 64-bit overflow
    const outcome = this.sql(
      `DELETE FROM channel_charges WHERE rowid IN (
         SELECT c.rowid FROM channel_charges c LEFT JOIN channels ch ON ch.channel_id = c.channel_id
         WHERE c.created_at < ? AND (ch.channel_id IS NULL OR length(c.cumulative) < length(ch.charged_cumulative)
           OR (length(c.cumulative) = length(ch.charged_cumulative) AND c.cumulative <= ch.charged_cumulative))
         LIMIT ?)`,
    ).run(olderThan.toISOString(), limit);
    return Number(outcome.changes);
  }

  async delete(channelId: string): Promise<void> {
    this.sql('DELETE FROM channels WHERE channel_id = ?').run(channelId.toLowerCase());
  }
}
