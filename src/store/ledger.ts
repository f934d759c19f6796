// The payments ledger: one row per payment key, the single source of truth for "was this proof used".
//
// States: reserved -> verified -> pending (settlement started) -> settled
//                                                               -> failed
//         reserved | verified -> released (verification or generation failed; the proof may be used again)
// A 'failed' or 'released' payment moved no funds, so its proof may be reserved again.
//
// Two engines implement it: SqliteLedger (embedded, the default) and PostgresLedger (DATABASE_URL; shared by
// several instances). Both make reserve() one atomic statement and hand each pending row to one reconciler at
// a time through a lease (claimPending).

import type { NonceAllocator, PendingCount } from './nonce-allocator.ts';
import type { ChannelStore } from './channel-store.ts';

/**
 * The ledger's database cannot be reached right now (a restart, a failover, a network cut): nothing about the
 * payment could be read or recorded. Whoever gets it has changed nothing it could not undo; a paid call that
 * meets it before its settlement moves no money (the HTTP layer answers 503, retry later).
 */
export class LedgerUnavailableError extends Error {
  override name = 'LedgerUnavailableError';
  constructor(cause: unknown) {
    super('the payments database is unavailable', { cause });
  }
}

export const PAYMENT_STATES = ['reserved', 'verified', 'pending', 'settled', 'failed', 'released'] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];

/** What the client gets back for a paid request, kept so a retry of the same proof gets it again. */
export interface StoredResult {
  status: number;
  body: unknown;
  /** media ids the body points at (deleted if the payment does not settle) */
  media: string[];
}

export interface NewPayment {
  key: string;
  network: string;
  payer: string;
  /** the most the payer authorized (exact: the price; upto: the ceiling), atomic units */
  amount: string;
  asset: string;
  payTo: string;
  resource: string;
  /** id of the model the request ran ('' on rows written before the column existed) */
  model: string;
  requestHash: string;
  /** the decoded X-PAYMENT and the requirement it paid, kept for reconciliation */
  payload: unknown;
  requirements: unknown;
}

export interface PaymentRecord extends NewPayment {
  state: PaymentState;
  /** what was settled (upto settles at most `amount`); null until settled, and on rows older than the column */
  settledAmount: string | null;
  txHash: string | null;
  error: string | null;
  result: StoredResult | null;
  createdAt: string;
  updatedAt: string;
  /** while in the future, a reconciler holds this pending payment (see claimPending) */
  leaseUntil: string | null;
  /** times this payment's paid work failed (the proof was then released, or, settled first, left without a result) */
  failedAttempts: number;
}

export interface PaymentUpdate {
  state: PaymentState;
  settledAmount?: string | null;
  payer?: string;
  txHash?: string | null;
  error?: string | null;
  result?: StoredResult | null;
  /** the paid work failed once more: failedAttempts goes up by one (see reserve's maxFailedAttempts) */
  countFailure?: boolean;
}

/** A payment as operators list it: every fact but the stored result body and the raw X-PAYMENT payload. */
export interface PaymentSummary extends Omit<PaymentRecord, 'result' | 'payload'> {
  /** a result is stored (a replay of the same proof and body gets it) */
  resultAvailable: boolean;
}

export interface PaymentFilter {
  state?: PaymentState;
  network?: string;
  model?: string;
  /** EVM addresses (0x…) match whatever their letter case; other addresses exactly */
  payer?: string;
  /** created at or after */
  from?: Date;
  /** created strictly before */
  before?: Date;
}

/** Where a page of listPayments ended: the (createdAt, key) of its last row. */
export interface PaymentCursor {
  createdAt: string;
  key: string;
}

export interface PaymentPage {
  payments: PaymentSummary[];
  /** pass it back to get the next page; null on the last page */
  next: PaymentCursor | null;
}

/** Revenue of one (UTC day, network, model): settled payments and charges committed on payment channels. */
export interface RevenueRow {
  /** YYYY-MM-DD, the UTC day the payment was made (createdAt) */
  day: string;
  network: string;
  model: string;
  count: number;
  /**
   * exact sum of what was settled (settledAmount, else amount) and of what channel vouchers were charged (claimed on
   * chain later by the claimer), a decimal integer string in atomic units
   */
  amount: string;
}

/** Rows in a final state: they are never written again, so retention may delete them. */
export const FINAL_STATES: readonly PaymentState[] = ['settled', 'failed', 'released'];

export type ReserveOutcome = { reserved: true } | { reserved: false; existing: PaymentRecord };

/**
 * Who holds the reservations a ledger makes: a random id per process and how long a reservation stays held
 * without a heartbeat. A reservation (reserved or verified) whose holder stopped beating (the process died
 * mid-work) is taken over by the next reserve() of its key, or released by the reconciler, once its lease ran out.
 */
export interface ReservationHolder {
  instanceId: string;
  leaseMs: number;
}

export const DEFAULT_RESERVATION_LEASE_MS = 10_000;

/** reserve()'s bound on failed attempts when none is given: none in practice (the largest 32-bit integer) */
export const UNBOUNDED_ATTEMPTS = 2_147_483_647;

export interface Ledger {
  /**
   * Nonces of a settlement key coordinated through this ledger, for ledgers several instances share
   * (PostgreSQL); absent when one process owns the ledger and its keys.
   */
  settlementNonces?(chainId: number, address: string, pendingCount: PendingCount): NonceAllocator;
  /** x402 batch-settlement payment channels, in the same database (channel-store.ts) */
  readonly channels?: ChannelStore;
  /**
   * Atomically claims the key for this ledger's holder: succeeds for a new key, one whose earlier use moved no
   * funds, or one reserved by a holder whose lease ran out (it died before settlement began). A key whose work
   * already failed `maxFailedAttempts` times is never claimed again (default: no bound).
   */
  reserve(payment: NewPayment, maxFailedAttempts?: number): Promise<ReserveOutcome>;
  /** Extends the lease of every reservation this ledger's holder still works on; returns how many. */
  heartbeat(): Promise<number>;
  /** Moves a payment to a new state; `from` guards against racing writers. Returns false if the state was not `from`. */
  transition(key: string, from: PaymentState[], update: PaymentUpdate): Promise<boolean>;
  get(key: string): Promise<PaymentRecord | undefined>;
  /** the payments a transaction settled: one, or several when settlement batching put them in one transaction */
  findByTransaction(txHash: string): Promise<PaymentRecord[]>;
  /** payments whose settlement outcome is not known yet */
  listPending(limit: number): Promise<PaymentRecord[]>;
  /**
   * Claims up to `limit` pending payments for this caller alone: each row returned gets a lease of `leaseMs`
   * and is not returned to anyone (this or another instance) again until that lease runs out. Rows updated
   * less than `idleMs` ago are left alone: the request that moved them to 'pending' may still be settling them.
   */
  claimPending(limit: number, leaseMs: number, idleMs?: number): Promise<PaymentRecord[]>;
  /**
   * reservations that never reached settlement and are older than the cutoff or whose holder's lease ran out
   * (the process died mid-request)
   */
  listStale(olderThan: Date, limit: number): Promise<PaymentRecord[]>;
  /**
   * Releases a reservation listed by listStale if it is still stale (not taken over or moved on meanwhile):
   * the check and the write are one statement. Returns whether it was released.
   */
  releaseStale(key: string, olderThan: Date, error: string): Promise<boolean>;
  /** newest first (createdAt, then key, descending); `after` continues from an earlier page's `next` */
  listPayments(filter: PaymentFilter, limit: number, after?: PaymentCursor): Promise<PaymentPage>;
  /** settled payments and channel charges summed exactly per (UTC day, network, model), ordered by day, network, model */
  revenue(filter: Pick<PaymentFilter, 'from' | 'before'>): Promise<RevenueRow[]>;
  /**
   * Deletes up to `limit` rows in a final state (settled, failed, released) last updated before `olderThan`;
   * returns how many went. Rows still in flight (reserved, verified, pending) are never touched, nor a settled payment
   * without a result (its work failed after it settled: owed a refund).
   */
  pruneFinal(olderThan: Date, limit: number): Promise<number>;
  /**
   * Deletes up to `limit` payment identifiers (bindPaymentId) bound before `olderThan`; returns how many went. Safe
   * for replay protection, which is the payment's own key (and, once settled, the chain): a forgotten id only
   * stops answering payment_id_conflict for a new payment under that id.
   */
  prunePaymentIds(olderThan: Date, limit: number): Promise<number>;
  /**
   * The newest settled payment of `payer` for this request (same requestHash) whose result is stored: what a
   * payer signing in (sign-in-with-x) gets again. EVM addresses match whatever their letter case.
   */
  findPaidResult(payer: string, requestHash: string): Promise<PaymentRecord | undefined>;
  /**
   * Records a sign-in nonce as used: true the first time, false ever after, whichever instance asks (one atomic
   * insert). Nonces past `expiresAt` are forgotten (their messages are refused as too old anyway).
   */
  useNonce(nonce: string, expiresAt: Date): Promise<boolean>;
  /**
   * Binds a client's payment identifier (x402 payment-identifier extension) to the hash of the payment it came
   * with (whose one-use key is `key`), in one atomic statement whichever instance sees it; returns the hash the id
   * is bound to, which differs from `payloadHash` while the id stands for another payment. A payment released or
   * failed (nothing charged: a work that failed, a stream left early, a proof that expired) no longer holds its id,
   * so a funded wallet cannot squat ids it never pays for: the next payment with the id takes it over.
   */
  bindPaymentId(id: string, payloadHash: string, key: string): Promise<string>;
  close(): Promise<void>;
}
