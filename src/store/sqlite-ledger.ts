// The embedded ledger on SQLite built into Node (node:sqlite): no server, one file under the data dir.
// Statements are synchronous and SQLite serialises writers, so every statement here is atomic.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  FINAL_STATES,
  type Ledger,
  type NewPayment,
  type PaymentCursor,
  type PaymentFilter,
  type PaymentPage,
  type PaymentRecord,
  type PaymentState,
  type PaymentSummary,
  type PaymentUpdate,
  type ReserveOutcome,
  type ReservationHolder,
  type RevenueRow,
  DEFAULT_RESERVATION_LEASE_MS,
  UNBOUNDED_ATTEMPTS,
} from './ledger.ts';
import { randomUUID } from 'node:crypto';
import { BOUND_PAYMENT_GONE, payerMatch, SQLITE_DIALECT, paymentConditions } from './payment-query.ts';
import { SqliteChannelStore } from './sqlite-channel-store.ts';
import { preparedStatements } from './sqlite-statements.ts';

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
  // 3: the model of each payment (revenue by model; older rows get ''), and the operator listing's order
  `ALTER TABLE payments ADD COLUMN model TEXT NOT NULL DEFAULT '';
   CREATE INDEX payments_created ON payments (created_at, key);`,
  // 4: sign-in-with-x: single-use nonces, and a payer's paid results found by request
  `CREATE TABLE siwx_nonces (nonce TEXT PRIMARY KEY, expires_at TEXT NOT NULL);
   CREATE INDEX siwx_nonces_expiry ON siwx_nonces (expires_at);
   CREATE INDEX payments_request_hash ON payments (request_hash);`,
  // 5: what was settled, beside the authorized maximum in amount (upto settles less; null on older rows)
  `ALTER TABLE payments ADD COLUMN settled_amount TEXT;`,
  // 6: reservation holders: which process works on a reservation and until when (heartbeat), so a dead one's is freed
  `ALTER TABLE payments ADD COLUMN held_by TEXT;
   ALTER TABLE payments ADD COLUMN held_until TEXT;`,
  // 7: x402 payment-identifier: each client-chosen id bound to the one payment it first came with
  `CREATE TABLE payment_ids (id TEXT PRIMARY KEY, payload_hash TEXT NOT NULL, created_at TEXT NOT NULL);`,
  // 8: settlement nonces are shared through PostgreSQL only; nothing here (keeps both engines' numbers alike)
  `-- no change`,
  // 9: how many times a payment's paid work failed, so a proof cannot be retried without limit
  `ALTER TABLE payments ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX payment_ids_created ON payment_ids (created_at);`,
  // 10: the payment key an id is bound to, so a released or failed payment frees its id (older rows: none, kept)
  `ALTER TABLE payment_ids ADD COLUMN payment_key TEXT;`,
];

/** Columns of a listing: everything but the result body and the payload, plus whether a result is stored. */
const SUMMARY_COLUMNS = `key, network, payer, amount, settled_amount, asset, pay_to, resource, model, request_hash, state, tx_hash, error,
  requirements, created_at, updated_at, lease_until, failed_attempts, result IS NOT NULL AS result_available`;

/** Revenue sums are exact without big integers in SQL: amounts are zero-padded to 36 digits and summed as four
 *  9-digit chunks (each sum stays far below 2^63), then put back together as a bigint. */
const CHUNK_DIGITS = 9;
const PADDED_DIGITS = 4 * CHUNK_DIGITS;

/** What earns revenue: settled payments (what was settled) and the charges committed on payment channels. */
const REVENUE_SOURCES = `SELECT created_at, network, model, COALESCE(settled_amount, amount) AS amount FROM payments WHERE state = 'settled'
  UNION ALL SELECT created_at, network, model, amount FROM channel_charges`;

interface Row {
  key: string;
  network: string;
  payer: string;
  amount: string;
  settled_amount: string | null;
  asset: string;
  pay_to: string;
  resource: string;
  model: string;
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
  failed_attempts: number;
}

type SummaryRow = Omit<Row, 'result' | 'payload'> & { result_available: number };

function commonFields(row: Omit<Row, 'result' | 'payload'>): Omit<PaymentRecord, 'result' | 'payload'> {
  return {
    key: row.key,
    network: row.network,
    payer: row.payer,
    amount: row.amount,
    settledAmount: row.settled_amount,
    asset: row.asset,
    payTo: row.pay_to,
    resource: row.resource,
    model: row.model,
    requestHash: row.request_hash,
    state: row.state,
    txHash: row.tx_hash,
    error: row.error,
    requirements: JSON.parse(row.requirements),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    leaseUntil: row.lease_until,
    failedAttempts: row.failed_attempts,
  };
}

function toRecord(row: Row): PaymentRecord {
  return {
    ...commonFields(row),
    result: row.result === null ? null : JSON.parse(row.result),
    payload: JSON.parse(row.payload),
  };
}

function toSummary(row: SummaryRow): PaymentSummary {
  return { ...commonFields(row), resultAvailable: row.result_available === 1 };
}

export class SqliteLedger implements Ledger {
  private readonly db: DatabaseSync;
  private readonly sql: (sql: string) => StatementSync;
  private readonly holder: ReservationHolder;
  readonly channels: SqliteChannelStore;

  constructor(path: string, holder: ReservationHolder = { instanceId: randomUUID(), leaseMs: DEFAULT_RESERVATION_LEASE_MS }) {
    this.holder = holder;
    this.db = new DatabaseSync(path);
    this.sql = preparedStatements(this.db);
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    this.migrate();
    this.channels = new SqliteChannelStore(this.db, this.sql);
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const applied = this.sql('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number };
      MIGRATIONS.slice(applied.v).forEach((sql, index) => {
        this.db.exec(sql);
        this.sql('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
          .run(applied.v + index + 1, new Date().toISOString());
      });
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async reserve(payment: NewPayment, maxFailedAttempts = UNBOUNDED_ATTEMPTS): Promise<ReserveOutcome> {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const claimed = this.sql(
      `INSERT INTO payments (key, network, payer, amount, asset, pay_to, resource, model, request_hash, state,
                             payload, requirements, created_at, updated_at, held_by, held_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET
         resource = excluded.resource, model = excluded.model, request_hash = excluded.request_hash, state = 'reserved',
         tx_hash = NULL, settled_amount = NULL, error = NULL, result = NULL, payload = excluded.payload,
         requirements = excluded.requirements, updated_at = excluded.updated_at, lease_until = NULL,
         held_by = excluded.held_by, held_until = excluded.held_until
       WHERE (payments.state IN ('released', 'failed') AND payments.failed_attempts < ?)
          OR (payments.state IN ('reserved', 'verified') AND payments.held_until IS NOT NULL AND payments.held_until < excluded.updated_at)
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
        payment.model,
        payment.requestHash,
        JSON.stringify(payment.payload),
        JSON.stringify(payment.requirements),
        now,
        now,
        this.holder.instanceId,
        new Date(nowMs + this.holder.leaseMs).toISOString(),
        maxFailedAttempts,
      );
    if (claimed) return { reserved: true };
    const existing = await this.get(payment.key);
    if (!existing) throw new Error(`payment ${payment.key} vanished during reservation`);
    return { reserved: false, existing };
  }

  async heartbeat(): Promise<number> {
    const outcome = this.sql(`UPDATE payments SET held_until = ? WHERE held_by = ? AND state IN ('reserved', 'verified')`)
      .run(new Date(Date.now() + this.holder.leaseMs).toISOString(), this.holder.instanceId);
    return Number(outcome.changes);
  }

  async transition(key: string, from: PaymentState[], update: PaymentUpdate): Promise<boolean> {
    const sets = ['state = ?', 'updated_at = ?'];
    const values: (string | null)[] = [update.state, new Date().toISOString()];
    if (update.payer !== undefined) (sets.push('payer = ?'), values.push(update.payer));
    if (update.txHash !== undefined) (sets.push('tx_hash = ?'), values.push(update.txHash));
    if (update.error !== undefined) (sets.push('error = ?'), values.push(update.error));
    if (update.settledAmount !== undefined) (sets.push('settled_amount = ?'), values.push(update.settledAmount));
    if (update.result !== undefined) (sets.push('result = ?'), values.push(update.result && JSON.stringify(update.result)));
    if (update.countFailure) sets.push('failed_attempts = failed_attempts + 1');
    const placeholders = from.map(() => '?').join(', ');
    const outcome = this.sql(`UPDATE payments SET ${sets.join(', ')} WHERE key = ? AND state IN (${placeholders})`)
      .run(...values, key, ...from);
    return outcome.changes === 1;
  }

  async get(key: string): Promise<PaymentRecord | undefined> {
    const row = this.sql('SELECT * FROM payments WHERE key = ?').get(key) as Row | undefined;
    return row && toRecord(row);
  }

  async findByTransaction(txHash: string): Promise<PaymentRecord[]> {
    const rows = this.sql('SELECT * FROM payments WHERE tx_hash = ? ORDER BY created_at LIMIT 500').all(txHash) as unknown as Row[];
    return rows.map(toRecord);
  }

  async listPending(limit: number): Promise<PaymentRecord[]> {
    const rows = this.sql(`SELECT * FROM payments WHERE state = 'pending' ORDER BY updated_at LIMIT ?`)
      .all(limit) as unknown as Row[];
    return rows.map(toRecord);
  }

  async claimPending(limit: number, leaseMs: number, idleMs = 0): Promise<PaymentRecord[]> {
    // One UPDATE ... RETURNING: SQLite runs it under its single writer lock, so no two callers (threads or
    // processes sharing the file) can claim the same row while its lease runs.
    const now = Date.now();
    const rows = this.sql(
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
    const rows = this.sql(
      `SELECT * FROM payments WHERE state IN ('reserved', 'verified') AND (updated_at < ? OR held_until < ?) ORDER BY updated_at LIMIT ?`,
    )
      .all(olderThan.toISOString(), new Date().toISOString(), limit) as unknown as Row[];
    return rows.map(toRecord);
  }

  async releaseStale(key: string, olderThan: Date, error: string): Promise<boolean> {
    const now = new Date().toISOString();
    const outcome = this.sql(
      `UPDATE payments SET state = 'released', error = ?, updated_at = ?
       WHERE key = ? AND state IN ('reserved', 'verified') AND (updated_at < ? OR held_until < ?)`,
    )
      .run(error, now, key, olderThan.toISOString(), now);
    return outcome.changes === 1;
  }

  async listPayments(filter: PaymentFilter, limit: number, after?: PaymentCursor): Promise<PaymentPage> {
    const { where, params } = paymentConditions(SQLITE_DIALECT, filter, after);
    const rows = this.sql(`SELECT ${SUMMARY_COLUMNS} FROM payments ${where} ORDER BY created_at DESC, key DESC LIMIT ?`)
      .all(...(params as string[]), limit + 1) as unknown as SummaryRow[];
    const payments = rows.slice(0, limit).map(toSummary);
    const last = payments.at(-1);
    return { payments, next: rows.length > limit && last ? { createdAt: last.createdAt, key: last.key } : null };
  }

  async revenue(filter: Pick<PaymentFilter, 'from' | 'before'>): Promise<RevenueRow[]> {
    const { where, params } = paymentConditions(SQLITE_DIALECT, { from: filter.from, before: filter.before });
    const chunk = (index: number) => `SUM(CAST(substr(padded, ${index * CHUNK_DIGITS + 1}, ${CHUNK_DIGITS}) AS INTEGER)) AS c${index}`;
    const statement = this.sql(
      `SELECT day, network, model, COUNT(*) AS count, MAX(length(amount)) AS digits, ${[0, 1, 2, 3].map(chunk).join(', ')}
       FROM (SELECT substr(created_at, 1, 10) AS day, network, model, amount,
                  substr('${'0'.repeat(PADDED_DIGITS)}' || amount, -${PADDED_DIGITS}) AS padded
           FROM (${REVENUE_SOURCES}) ${where})
       GROUP BY day, network, model
       ORDER BY day, network, model`,
    );
    statement.setReadBigInts(true);
    const rows = statement.all(...(params as string[])) as unknown as {
      day: string;
      network: string;
      model: string;
      count: bigint;
      digits: bigint;
      c0: bigint;
      c1: bigint;
      c2: bigint;
      c3: bigint;
    }[];
    const base = 10n ** BigInt(CHUNK_DIGITS);
    return rows.map((row) => {
      if (row.digits > BigInt(PADDED_DIGITS)) throw new Error(`an amount of ${row.digits} digits is beyond the revenue sum's ${PADDED_DIGITS}`);
      const amount = ((row.c0 * base + row.c1) * base + row.c2) * base + row.c3;
      return { day: row.day, network: row.network, model: row.model, count: Number(row.count), amount: amount.toString() };
    });
  }

  async pruneFinal(olderThan: Date, limit: number): Promise<number> {
    const states = FINAL_STATES.map(() => '?').join(', ');
    const outcome = this.sql(
      `DELETE FROM payments WHERE key IN (
         SELECT key FROM payments WHERE state IN (${states}) AND updated_at < ? AND NOT (state = 'settled' AND result IS NULL) LIMIT ?)`,
    )
      .run(...FINAL_STATES, olderThan.toISOString(), limit);
    return Number(outcome.changes);
  }

  async prunePaymentIds(olderThan: Date, limit: number): Promise<number> {
    const outcome = this.sql('DELETE FROM payment_ids WHERE id IN (SELECT id FROM payment_ids WHERE created_at < ? LIMIT ?)')
      .run(olderThan.toISOString(), limit);
    return Number(outcome.changes);
  }

  async findPaidResult(payer: string, requestHash: string): Promise<PaymentRecord | undefined> {
    const row = this.sql(
      `SELECT * FROM payments WHERE request_hash = ? AND state = 'settled' AND result IS NOT NULL AND ${payerMatch('?', '?')}
       ORDER BY created_at DESC LIMIT 1`,
    )
      .get(requestHash, payer, payer) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  async useNonce(nonce: string, expiresAt: Date): Promise<boolean> {
    this.sql('DELETE FROM siwx_nonces WHERE expires_at < ?').run(new Date().toISOString());
    const outcome = this.sql('INSERT INTO siwx_nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING')
      .run(nonce, expiresAt.toISOString());
    return Number(outcome.changes) === 1;
  }

  async bindPaymentId(id: string, payloadHash: string, key: string): Promise<string> {
    this.sql(
      `INSERT INTO payment_ids (id, payload_hash, payment_key, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET payload_hash = excluded.payload_hash, payment_key = excluded.payment_key, created_at = excluded.created_at
       WHERE ${BOUND_PAYMENT_GONE}`,
    ).run(id, payloadHash, key, new Date().toISOString());
    const row = this.sql('SELECT payload_hash FROM payment_ids WHERE id = ?').get(id) as { payload_hash: string };
    return row.payload_hash;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
