// The shared ledger on PostgreSQL (selected by DATABASE_URL / `databaseUrl`): several gateway instances
// behind a load balancer use one database, so a proof is used once across all of them.
// Every state change is one statement; the database's row locks and unique key do the arbitration.
// Timestamps come from the database clock (now()), so instances with skewed clocks still agree on leases.
import pg from 'pg';
import { PostgresChannelStore } from './postgres-channel-store.ts';
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
import { BOUND_PAYMENT_GONE, POSTGRES_DIALECT, paymentConditions, payerMatch } from './payment-query.ts';
import { SETTLEMENT_NONCES_MIGRATION, SharedNonces } from './postgres-nonces.ts';
import { asLedgerError, inTransaction } from './postgres-connection.ts';
import type { NonceAllocator, PendingCount } from './nonce-allocator.ts';

/** Applied in order, each once, in one transaction under an advisory lock (see migrate()). Never edit a shipped one. */
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `CREATE TABLE payments (
     key text PRIMARY KEY,
     network text NOT NULL,
     payer text NOT NULL,
     amount numeric(78, 0) NOT NULL,
     asset text NOT NULL,
     pay_to text NOT NULL,
     resource text NOT NULL,
     request_hash text NOT NULL,
     state text NOT NULL CHECK (state IN ('reserved', 'verified', 'pending', 'settled', 'failed', 'released')),
     tx_hash text,
     error text,
     result json,
     payload jsonb NOT NULL,
     requirements jsonb NOT NULL,
     created_at timestamptz NOT NULL,
     updated_at timestamptz NOT NULL
   );
   CREATE INDEX payments_tx_hash ON payments (tx_hash);
   CREATE INDEX payments_state ON payments (state, updated_at);`,
  // 2: reconciliation leases, so several instances never check the same pending payment at once
  `ALTER TABLE payments ADD COLUMN lease_until timestamptz;`,
  // 3: the model of each payment (revenue by model; older rows get ''), and the operator listing's order
  `ALTER TABLE payments ADD COLUMN model text NOT NULL DEFAULT '';
   CREATE INDEX payments_created ON payments (created_at, key);`,
  // 4: sign-in-with-x: single-use nonces, and a payer's paid results found by request
  `CREATE TABLE siwx_nonces (nonce text PRIMARY KEY, expires_at timestamptz NOT NULL);
   CREATE INDEX siwx_nonces_expiry ON siwx_nonces (expires_at);
   CREATE INDEX payments_request_hash ON payments (request_hash);`,
  // 5: what was settled, beside the authorized maximum in amount (upto settles less; null on older rows)
  `ALTER TABLE payments ADD COLUMN settled_amount numeric(78, 0);`,
  // 6: reservation holders: which process works on a reservation and until when (heartbeat), so a dead one's is freed
  `ALTER TABLE payments ADD COLUMN held_by text;
   ALTER TABLE payments ADD COLUMN held_until timestamptz;`,
  // 7: x402 payment-identifier: each client-chosen id bound to the one payment it first came with
  `CREATE TABLE payment_ids (id text PRIMARY KEY, payload_hash text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());`,
  // 8: account nonces of settlement keys shared by several instances (src/store/postgres-nonces.ts)
  SETTLEMENT_NONCES_MIGRATION,
  // 9: how many times a payment's paid work failed, so a proof cannot be retried without limit
  `ALTER TABLE payments ADD COLUMN failed_attempts integer NOT NULL DEFAULT 0;
   CREATE INDEX payment_ids_created ON payment_ids (created_at);`,
  // 10: the payment key an id is bound to, so a released or failed payment frees its id (older rows: none, kept)
  `ALTER TABLE payment_ids ADD COLUMN payment_key text;`,
];

/** created_at to the microsecond, as ISO text: a page cursor must not lose the precision the column has. */
const CREATED_EXACT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_exact`;

/** Columns of a listing: everything but the result body and the payload, plus whether a result is stored. */
const SUMMARY_COLUMNS = `key, network, payer, amount, settled_amount, asset, pay_to, resource, model, request_hash, state, tx_hash, error,
  requirements, created_at, updated_at, lease_until, failed_attempts, result IS NOT NULL AS result_available, ${CREATED_EXACT}`;

/** Key of the advisory lock held while migrating; any constant works as long as every instance uses the same. */
const MIGRATION_LOCK = 4021_0402;

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
  // `result` is json (not jsonb): a replayed body keeps the exact key order the client first got
  result: PaymentRecord['result'];
  payload: unknown;
  requirements: unknown;
  created_at: Date;
  updated_at: Date;
  lease_until: Date | null;
  failed_attempts: number;
}

type SummaryRow = Omit<Row, 'result' | 'payload'> & { result_available: boolean; created_exact: string };

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
    requirements: row.requirements,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    leaseUntil: row.lease_until && row.lease_until.toISOString(),
    failedAttempts: row.failed_attempts,
  };
}

function toRecord(row: Row): PaymentRecord {
  return { ...commonFields(row), result: row.result, payload: row.payload };
}

function toSummary(row: SummaryRow): PaymentSummary {
  return { ...commonFields(row), resultAvailable: row.result_available };
}

export interface PostgresLedgerOptions {
  /** postgres://user:password@host:port/database (or any libpq-style connection string pg accepts) */
  connectionString: string;
  /** most connections this instance opens; default 10 */
  maxConnections?: number;
  /** told about errors of idle pooled connections (the pool drops them and reconnects on demand) */
  onIdleError?: (error: Error) => void;
  /** who holds this instance's reservations; default a random id and a 10 s lease */
  holder?: ReservationHolder;
}

export class PostgresLedger implements Ledger {
  private readonly pool: pg.Pool;
  channels?: PostgresChannelStore;
  private readonly holder: ReservationHolder;

  private constructor(pool: pg.Pool, holder: ReservationHolder) {
    this.pool = pool;
    this.holder = holder;
  }

  /** Connects and brings the schema up to date; safe when several instances start at once. */
  static async open(options: PostgresLedgerOptions): Promise<PostgresLedger> {
    const pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      // fail (and let the request or the startup fail) rather than wait on an unreachable server forever
      connectionTimeoutMillis: 10_000,
      application_name: 'x402-ai-gateway',
    });
    // Without a listener an idle connection's error (server restart, network blip) would crash the process.
    pool.on('error', (error) => options.onIdleError?.(error));
    const ledger = new PostgresLedger(pool, options.holder ?? { instanceId: randomUUID(), leaseMs: DEFAULT_RESERVATION_LEASE_MS });
    try {
      await ledger.migrate();
      ledger.channels = await PostgresChannelStore.open(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return ledger;
  }

  /** One statement on a pooled connection; a database that cannot be reached is a LedgerUnavailableError. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as pg.Pool.query's own default
  private async query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw asLedgerError(error);
    }
  }

  /** Applies the migrations not applied yet. The advisory lock makes concurrent starters wait, then see them applied. */
  private async migrate(): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ v: number }>('SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_migrations');
      const applied = rows[0]?.v ?? 0;
      for (const [index, sql] of POSTGRES_MIGRATIONS.entries()) {
        if (index < applied) continue;
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [index + 1]);
      }
    });
  }

  async reserve(payment: NewPayment, maxFailedAttempts = UNBOUNDED_ATTEMPTS): Promise<ReserveOutcome> {
    // One statement: a new key is inserted; an existing one is taken over only if its earlier use moved no
    // funds. Concurrent callers with one key serialise on the key's index entry; exactly one gets a row back.
    const claimed = await this.query(
      `INSERT INTO payments (key, network, payer, amount, asset, pay_to, resource, model, request_hash, state,
                             payload, requirements, created_at, updated_at, held_by, held_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'reserved', $10, $11, now(), now(), $12, now() + $13 * interval '1 millisecond')
       ON CONFLICT (key) DO UPDATE SET
         resource = EXCLUDED.resource, model = EXCLUDED.model, request_hash = EXCLUDED.request_hash, state = 'reserved',
         tx_hash = NULL, settled_amount = NULL, error = NULL, result = NULL, payload = EXCLUDED.payload,
         requirements = EXCLUDED.requirements, updated_at = EXCLUDED.updated_at, lease_until = NULL,
         held_by = EXCLUDED.held_by, held_until = EXCLUDED.held_until
       WHERE (payments.state IN ('released', 'failed') AND payments.failed_attempts < $14)
          OR (payments.state IN ('reserved', 'verified') AND payments.held_until < now())
       RETURNING key`,
      [
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
        this.holder.instanceId,
        this.holder.leaseMs,
        maxFailedAttempts,
      ],
    );
    if (claimed.rowCount === 1) return { reserved: true };
    const existing = await this.get(payment.key);
    if (!existing) throw new Error(`payment ${payment.key} vanished during reservation`);
    return { reserved: false, existing };
  }

  async heartbeat(): Promise<number> {
    const outcome = await this.query(
      `UPDATE payments SET held_until = now() + $2 * interval '1 millisecond' WHERE held_by = $1 AND state IN ('reserved', 'verified')`,
      [this.holder.instanceId, this.holder.leaseMs],
    );
    return outcome.rowCount ?? 0;
  }

  async transition(key: string, from: PaymentState[], update: PaymentUpdate): Promise<boolean> {
    const values: unknown[] = [update.state];
    const sets = ['state = $1', 'updated_at = now()'];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (update.payer !== undefined) set('payer', update.payer);
    if (update.txHash !== undefined) set('tx_hash', update.txHash);
    if (update.error !== undefined) set('error', update.error);
    if (update.settledAmount !== undefined) set('settled_amount', update.settledAmount);
    if (update.result !== undefined) set('result', update.result && JSON.stringify(update.result));
    if (update.countFailure) sets.push('failed_attempts = failed_attempts + 1');
    values.push(key, from);
    const outcome = await this.query(
      `UPDATE payments SET ${sets.join(', ')} WHERE key = $${values.length - 1} AND state = ANY($${values.length}::text[])`,
      values,
    );
    return outcome.rowCount === 1;
  }

  async get(key: string): Promise<PaymentRecord | undefined> {
    const { rows } = await this.query<Row>('SELECT * FROM payments WHERE key = $1', [key]);
    return rows[0] && toRecord(rows[0]);
  }

  async findByTransaction(txHash: string): Promise<PaymentRecord[]> {
    const { rows } = await this.query<Row>('SELECT * FROM payments WHERE tx_hash = $1 ORDER BY created_at LIMIT 500', [txHash]);
    return rows.map(toRecord);
  }

  async listPending(limit: number): Promise<PaymentRecord[]> {
    const { rows } = await this.query<Row>(
      `SELECT * FROM payments WHERE state = 'pending' ORDER BY updated_at LIMIT $1`,
      [limit],
    );
    return rows.map(toRecord);
  }

  async claimPending(limit: number, leaseMs: number, idleMs = 0): Promise<PaymentRecord[]> {
    // SELECT ... FOR UPDATE SKIP LOCKED and the UPDATE that stamps the lease run as one statement (one
    // transaction): rows another instance is claiming right now are skipped, not waited for, and a row whose
    // lease was just stamped by a committed claim fails the re-checked WHERE and is skipped too.
    const { rows } = await this.query<Row>(
      `WITH claimable AS (
         SELECT key FROM payments
         WHERE state = 'pending'
           AND (lease_until IS NULL OR lease_until <= now())
           AND updated_at <= now() - make_interval(secs => $3::double precision / 1000)
         ORDER BY updated_at
         LIMIT $1
         FOR UPDATE SKIP LOCKED
       )
       UPDATE payments SET lease_until = date_trunc('milliseconds', now() + make_interval(secs => $2::double precision / 1000))
       FROM claimable WHERE payments.key = claimable.key
       RETURNING payments.*`,
      [limit, leaseMs, idleMs],
    );
    return rows.map(toRecord).sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
  }

  async listStale(olderThan: Date, limit: number): Promise<PaymentRecord[]> {
    const { rows } = await this.query<Row>(
      `SELECT * FROM payments WHERE state IN ('reserved', 'verified') AND (updated_at < $1 OR held_until < now()) ORDER BY updated_at LIMIT $2`,
      [olderThan, limit],
    );
    return rows.map(toRecord);
  }

  async releaseStale(key: string, olderThan: Date, error: string): Promise<boolean> {
    const outcome = await this.query(
      `UPDATE payments SET state = 'released', error = $3, updated_at = now()
       WHERE key = $1 AND state IN ('reserved', 'verified') AND (updated_at < $2 OR held_until < now())`,
      [key, olderThan, error],
    );
    return outcome.rowCount === 1;
  }

  async listPayments(filter: PaymentFilter, limit: number, after?: PaymentCursor): Promise<PaymentPage> {
    const { where, params } = paymentConditions(POSTGRES_DIALECT, filter, after);
    const { rows } = await this.query<SummaryRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM payments ${where} ORDER BY created_at DESC, key DESC LIMIT $${params.length + 1}`,
      [...params, limit + 1],
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      payments: page.map(toSummary),
      next: rows.length > limit && last ? { createdAt: last.created_exact, key: last.key } : null,
    };
  }

  async revenue(filter: Pick<PaymentFilter, 'from' | 'before'>): Promise<RevenueRow[]> {
    // amount is numeric(78, 0): SUM is exact, and travels as text
    const { where, params } = paymentConditions(POSTGRES_DIALECT, { from: filter.from, before: filter.before });
    // what earns revenue: settled payments (what was settled) and the charges committed on payment channels
    const { rows } = await this.query<{ day: string; network: string; model: string; count: string; amount: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, network, model,
              COUNT(*)::text AS count, SUM(amount)::text AS amount
       FROM (SELECT created_at, network, model, COALESCE(settled_amount, amount) AS amount FROM payments WHERE state = 'settled'
             UNION ALL SELECT created_at, network, model, amount FROM channel_charges) AS earned
       ${where}
       GROUP BY 1, 2, 3
       ORDER BY day, network COLLATE "C", model COLLATE "C"`,
      params,
    );
    return rows.map((row) => ({ day: row.day, network: row.network, model: row.model, count: Number(row.count), amount: row.amount }));
  }

  async pruneFinal(olderThan: Date, limit: number): Promise<number> {
    // SKIP LOCKED: instances pruning at the same moment take different rows instead of queueing on each other
    const outcome = await this.query(
      `DELETE FROM payments WHERE key IN (
         SELECT key FROM payments WHERE state = ANY($1::text[]) AND updated_at < $2 AND NOT (state = 'settled' AND result IS NULL)
         LIMIT $3 FOR UPDATE SKIP LOCKED)`,
      [FINAL_STATES, olderThan, limit],
    );
    return outcome.rowCount ?? 0;
  }

  async prunePaymentIds(olderThan: Date, limit: number): Promise<number> {
    const outcome = await this.query(
      `DELETE FROM payment_ids WHERE id IN (
         SELECT id FROM payment_ids WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [olderThan, limit],
    );
    return outcome.rowCount ?? 0;
  }

  async findPaidResult(payer: string, requestHash: string): Promise<PaymentRecord | undefined> {
    const outcome = await this.query(
      `SELECT * FROM payments WHERE request_hash = $1 AND state = 'settled' AND result IS NOT NULL
         AND ${payerMatch('$2', '$3')}
       ORDER BY created_at DESC LIMIT 1`,
      [requestHash, payer, payer],
    );
    return outcome.rows[0] ? toRecord(outcome.rows[0]) : undefined;
  }

  async useNonce(nonce: string, expiresAt: Date): Promise<boolean> {
    await this.query('DELETE FROM siwx_nonces WHERE expires_at < now()');
    const outcome = await this.query('INSERT INTO siwx_nonces (nonce, expires_at) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING', [
      nonce,
      expiresAt,
    ]);
    return outcome.rowCount === 1;
  }

  async bindPaymentId(id: string, payloadHash: string, key: string): Promise<string> {
    await this.query(
      `INSERT INTO payment_ids (id, payload_hash, payment_key) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET payload_hash = excluded.payload_hash, payment_key = excluded.payment_key, created_at = now()
       WHERE ${BOUND_PAYMENT_GONE}`,
      [id, payloadHash, key],
    );
    // a statement of its own: its snapshot sees the row a concurrent first use committed
    const outcome = await this.query('SELECT payload_hash FROM payment_ids WHERE id = $1', [id]);
    return outcome.rows[0].payload_hash as string;
  }

  /** The nonces of a settlement key other instances on this database may send with too. */
  settlementNonces(chainId: number, address: string, pendingCount: PendingCount): NonceAllocator {
    return new SharedNonces(this.pool, chainId, address, pendingCount);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
