// The embedded ledger on SQLite built into Node (node:sqlite): no server, one file under the data dir.
// Statements are synchronous and SQLite serialises writers, so every statement here is atomic.
import { DatabaseSync } from 'node:sqlite';
import type { Ledger, NewPayment, PaymentRecord, PaymentState, PaymentUpdate, ReserveOutcome } from './ledger.ts';

const MIGRATIONS: string[] = [
  `CREATE TABLE payments (
     key TEXT PRIMARY KEY,
     network TEXT NOT NULL,
     payer TEXT NOT NULL,
     amount TEXT NOT NULL,
     asset TEXT NOT NULL,
     pay_to TEXT NOT NULL,
     resource TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     state TEXT NOT NULL,
     tx_hash TEXT,
     error TEXT,
     result TEXT,
     payload TEXT NOT NULL,
     requirements TEXT NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX payments_tx_hash ON payments (tx_hash);
   CREATE INDEX payments_state ON payments (state, updated_at);`,
  // 2: reconciliation leases, so several reconcilers never check the same pending payment at once
  `ALTER TABLE payments ADD COLUMN lease_until TEXT;`,
];

interface Row {
  key: string;
  network: string;
  payer: string;
  amount: string;
  asset: string;
  pay_to: string;
  resource: string;
  request_hash: string;
  state: PaymentState;
  tx_hash: string | null;
  error: string | null;
  result: string | null;
  payload: string;
  requirements: string;
  created_at: string;
  updated_at: string;
  lease_until: string | null;
}

function toRecord(row: Row): PaymentRecord {
  return {
    key: row.key,
    network: row.network,
    payer: row.payer,
    amount: row.amount,
    asset: row.asset,
    payTo: row.pay_to,
    resource: row.resource,
    requestHash: row.request_hash,
    state: row.state,
    txHash: row.tx_hash,
    error: row.error,
    result: row.result === null ? null : JSON.parse(row.result),
    payload: JSON.parse(row.payload),
    requirements: JSON.parse(row.requirements),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    leaseUntil: row.lease_until,
  };
}

export class SqliteLedger implements Ledger {
  private readonly db: DatabaseSync;

  constructor(path: string) {
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    this.migrate();
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const applied = this.db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number };
      MIGRATIONS.slice(applied.v).forEach((sql, index) => {
        this.db.exec(sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
          .run(applied.v + index + 1, new Date().toISOString());
      });
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async reserve(payment: NewPayment): Promise<ReserveOutcome> {
    const now = new Date().toISOString();
    const claimed = this.db
      .prepare(
        `INSERT INTO payments (key, network, payer, amount, asset, pay_to, resource, request_hash, state,
                               payload, requirements, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET
           resource = excluded.resource, request_hash = excluded.request_hash, state = 'reserved',
           tx_hash = NULL, error = NULL, result = NULL, payload = excluded.payload,
           requirements = excluded.requirements, updated_at = excluded.updated_at, lease_until = NULL
         WHERE payments.state IN ('released', 'failed')
         RETURNING key`,
      )
      .get(
        payment.key,
        payment.network,
        payment.payer,
        payment.amount,
        payment.asset,
        payment.payTo,
        payment.resource,
        payment.requestHash,
        JSON.stringify(payment.payload),
        JSON.stringify(payment.requirements),
        now,
        now,
      );
    if (claimed) return { reserved: true };
    const existing = await this.get(payment.key);
    if (!existing) throw new Error(`payment ${payment.key} vanished during reservation`);
    return { reserved: false, existing };
  }

  async transition(key: string, from: PaymentState[], update: PaymentUpdate): Promise<boolean> {
    const sets = ['state = ?', 'updated_at = ?'];
    const values: (string | null)[] = [update.state, new Date().toISOString()];
    if (update.payer !== undefined) (sets.push('payer = ?'), values.push(update.payer));
    if (update.txHash !== undefined) (sets.push('tx_hash = ?'), values.push(update.txHash));
    if (update.error !== undefined) (sets.push('error = ?'), values.push(update.error));
    if (update.result !== undefined) (sets.push('result = ?'), values.push(update.result && JSON.stringify(update.result)));
    const placeholders = from.map(() => '?').join(', ');
    const outcome = this.db
      .prepare(`UPDATE payments SET ${sets.join(', ')} WHERE key = ? AND state IN (${placeholders})`)
      .run(...values, key, ...from);
    return outcome.changes === 1;
  }

  async get(key: string): Promise<PaymentRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM payments WHERE key = ?').get(key) as Row | undefined;
    return row && toRecord(row);
  }

  async findByTransaction(txHash: string): Promise<PaymentRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM payments WHERE tx_hash = ?').get(txHash) as Row | undefined;
    return row && toRecord(row);
  }

  async listPending(limit: number): Promise<PaymentRecord[]> {
    const rows = this.db
      .prepare(`SELECT * FROM payments WHERE state = 'pending' ORDER BY updated_at LIMIT ?`)
      .all(limit) as unknown as Row[];
    return rows.map(toRecord);
  }

  async claimPending(limit: number, leaseMs: number, idleMs = 0): Promise<PaymentRecord[]> {
    // One UPDATE ... RETURNING: SQLite runs it under its single writer lock, so no two callers (threads or
    // processes sharing the file) can claim the same row while its lease runs.
    const now = Date.now();
    const rows = this.db
      .prepare(
        `UPDATE payments SET lease_until = ?
         WHERE key IN (SELECT key FROM payments
                       WHERE state = 'pending' AND (lease_until IS NULL OR lease_until <= ?) AND updated_at <= ?
                       ORDER BY updated_at LIMIT ?)
         RETURNING *`,
      )
      .all(
        new Date(now + leaseMs).toISOString(),
        new Date(now).toISOString(),
        new Date(now - idleMs).toISOString(),
        limit,
      ) as unknown as Row[];
    return rows.map(toRecord).sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
  }

  async listStale(olderThan: Date, limit: number): Promise<PaymentRecord[]> {
    const rows = this.db
      .prepare(`SELECT * FROM payments WHERE state IN ('reserved', 'verified') AND updated_at < ? ORDER BY updated_at LIMIT ?`)
      .all(olderThan.toISOString(), limit) as unknown as Row[];
    return rows.map(toRecord);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
