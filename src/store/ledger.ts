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

export type PaymentState = 'reserved' | 'verified' | 'pending' | 'settled' | 'failed' | 'released';

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
  amount: string;
  asset: string;
  payTo: string;
  resource: string;
  requestHash: string;
  /** the decoded X-PAYMENT and the requirement it paid, kept for reconciliation */
  payload: unknown;
  requirements: unknown;
}

export interface PaymentRecord extends NewPayment {
  state: PaymentState;
  txHash: string | null;
  error: string | null;
  result: StoredResult | null;
  createdAt: string;
  updatedAt: string;
  /** while in the future, a reconciler holds this pending payment (see claimPending) */
  leaseUntil: string | null;
}

export interface PaymentUpdate {
  state: PaymentState;
  payer?: string;
  txHash?: string | null;
  error?: string | null;
  result?: StoredResult | null;
}

export type ReserveOutcome = { reserved: true } | { reserved: false; existing: PaymentRecord };

export interface Ledger {
  /** Atomically claims the key: succeeds for a new key or one whose earlier use moved no funds. */
  reserve(payment: NewPayment): Promise<ReserveOutcome>;
  /** Moves a payment to a new state; `from` guards against racing writers. Returns false if the state was not `from`. */
  transition(key: string, from: PaymentState[], update: PaymentUpdate): Promise<boolean>;
  get(key: string): Promise<PaymentRecord | undefined>;
  findByTransaction(txHash: string): Promise<PaymentRecord | undefined>;
  /** payments whose settlement outcome is not known yet */
  listPending(limit: number): Promise<PaymentRecord[]>;
  /**
   * Claims up to `limit` pending payments for this caller alone: each row returned gets a lease of `leaseMs`
   * and is not returned to anyone (this or another instance) again until that lease runs out. Rows updated
   * less than `idleMs` ago are left alone: the request that moved them to 'pending' may still be settling them.
   */
  claimPending(limit: number, leaseMs: number, idleMs?: number): Promise<PaymentRecord[]>;
  /** reservations older than the cutoff that never reached settlement (e.g. the process died mid-request) */
  listStale(olderThan: Date, limit: number): Promise<PaymentRecord[]>;
  close(): Promise<void>;
}
