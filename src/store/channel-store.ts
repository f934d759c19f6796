// Payment channels (x402 `batch-settlement`) in the ledger: one row per channel with what the server charged,
// the payer's latest signed voucher, and the fields mirrored from the escrow on chain.
//
// Two kinds of exclusion, both through leases in the database so they hold across instances:
// - a request lock per channel (lock/unlock): requests on one channel run one at a time, since each voucher
//   must extend the cumulative amount the previous one left;
// - named leases (lease/unlock with any name): the claimer's round, so one instance claims a voucher.
// Rows change only through update(), which reads and writes one row atomically (no lost updates between a
// request committing its charge and the claimer recording a claim), or commit(), which does the same and keeps the
// charge's own row (its result, so the same voucher gets it again; what the revenue report counts) in the same
// transaction.
import type { ChannelConfig } from '../x402/batch-settlement.ts';

export interface ChannelRecord {
  channelId: string;
  network: string;
  config: ChannelConfig;
  /** what the server charged on this channel, cumulative (atomic units) */
  chargedCumulative: bigint;
  /** the payer's latest voucher: its ceiling and signature ('' before the first) */
  signedMaxClaimable: bigint;
  signature: string;
  /** mirrored from the escrow */
  balance: bigint;
  totalClaimed: bigint;
  withdrawRequestedAt: number;
  refundNonce: bigint;
  /** when the mirrored fields were last read from the chain (ms since the epoch) */
  syncedAt: number;
  /** totals of what went through this server: deposits it submitted, refunds it made */
  deposited: bigint;
  refunded: bigint;
  /** of totalClaimed, what a settle has swept to the receiver (as far as this server saw it claimed before the settle) */
  settled: bigint;
  /** the last claim and refund transactions ('' for none) */
  lastClaimTx: string;
  lastRefundTx: string;
  /**
   * The last refund: the signature of the voucher it was asked with (each is used once), the amount asked ('' for
   * everything not charged) and what it returned ('' while it is being submitted)
   */
  refundVoucher: string;
  refundAsked: string;
  refundAmount: string;
  lastRequestAt: number;
  createdAt: number;
  updatedAt: number;
}

/** One charge committed on a channel: what a voucher paid for, and the result it was paid for. */
export interface ChannelCharge {
  channelId: string;
  /** the voucher's ceiling (maxClaimableAmount) it was committed under: its key within the channel */
  cumulative: bigint;
  network: string;
  payer: string;
  /** the catalog id of the model the call ran */
  model: string;
  /** what was charged (atomic units) */
  amount: bigint;
  /** the request it paid for: only the same request gets its result again */
  requestHash: string;
  /** the answer delivered (as a payment's stored result) */
  result: { status: number; body: unknown; media: string[] };
  /** ms since the epoch */
  createdAt: number;
}

export interface ChannelStore {
  /**
   * true when one process owns the database (the embedded SQLite ledger): requests on a channel are then
   * serialised by that process's own queue, and the per-channel lock in the database is skipped
   */
  readonly singleInstance: boolean;
  get(channelId: string): Promise<ChannelRecord | undefined>;
  /**
   * Changes one channel atomically: `change` sees the current row (undefined if none) and returns the row to
   * keep (undefined: leave it as it is). Returns what is stored afterwards.
   */
  update(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined): Promise<ChannelRecord | undefined>;
  /** update() that also keeps `charge` in the same transaction, when `change` keeps a row */
  commit(channelId: string, change: (current: ChannelRecord | undefined) => ChannelRecord | undefined, charge: ChannelCharge): Promise<ChannelRecord | undefined>;
  /** the charge a channel committed under the voucher of ceiling `cumulative` */
  chargeAt(channelId: string, cumulative: bigint): Promise<ChannelCharge | undefined>;
  /** A charge on the channel whose result holds the stored file `mediaId` (what its payer may read back), if any. */
  chargeHolding(channelId: string, mediaId: string): Promise<ChannelCharge | undefined>;
  /**
   * Deletes up to `limit` charges made before `olderThan` (their results and their revenue); returns how many went.
   * A charge whose voucher's ceiling is above what its channel has charged is kept: it is what tells that voucher was
   * used (channel-gate.ts), and a later price could meet it.
   */
  pruneCharges(olderThan: Date, limit: number): Promise<number>;
  /** Takes `name` (a channel id, or a lease name) for `holder` until `leaseMs` from now; false while another holds it. */
  lock(name: string, holder: string, leaseMs: number): Promise<boolean>;
  unlock(name: string, holder: string): Promise<void>;
  /** Channels with charges not claimed yet, or a withdrawal the payer started, on `network` (oldest first). */
  outstanding(network: string, limit: number): Promise<ChannelRecord[]>;
  /** Channels whose claimed amount is not all known settled yet, on `network`. */
  unsettled(network: string, limit: number): Promise<ChannelRecord[]>;
  /** Every channel, newest first (the operator's listing). */
  list(options?: { network?: string; payer?: string; limit?: number }): Promise<ChannelRecord[]>;
  delete(channelId: string): Promise<void>;
}

/** A record with nothing charged yet, for a channel seen for the first time. */
export function newChannelRecord(channelId: string, network: string, config: ChannelConfig, now: number): ChannelRecord {
  return {
    channelId,
    network,
    config,
    chargedCumulative: 0n,
    signedMaxClaimable: 0n,
    signature: '',
    balance: 0n,
    totalClaimed: 0n,
    withdrawRequestedAt: 0,
    refundNonce: 0n,
    syncedAt: 0,
    deposited: 0n,
    refunded: 0n,
    settled: 0n,
    lastClaimTx: '',
    lastRefundTx: '',
    refundVoucher: '',
    refundAsked: '',
    refundAmount: '',
    lastRequestAt: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** Whether the claimer has work on this channel: charges above what is claimed. */
export function needsClaim(record: ChannelRecord): boolean {
  return record.chargedCumulative > record.totalClaimed;
}

/** Row <-> record: amounts are decimal strings in both engines (uint128 does not fit SQL integers). */
export interface ChannelRow {
  channel_id: string;
  network: string;
  payer: string;
  config: string;
  charged_cumulative: string;
  signed_max_claimable: string;
  signature: string;
  balance: string;
  total_claimed: string;
  withdraw_requested_at: number | string;
  refund_nonce: string;
  synced_at: number | string;
  deposited: string;
  refunded: string;
  settled: string;
  last_claim_tx: string;
  last_refund_tx: string;
  refund_voucher: string;
  refund_asked: string;
  refund_amount: string;
  last_request_at: number | string;
  outstanding: number | boolean;
  created_at: number | string;
  updated_at: number | string;
}

export function recordFromRow(row: ChannelRow): ChannelRecord {
  return {
    channelId: row.channel_id,
    network: row.network,
    config: JSON.parse(row.config) as ChannelConfig,
    chargedCumulative: BigInt(row.charged_cumulative),
    signedMaxClaimable: BigInt(row.signed_max_claimable),
    signature: row.signature,
    balance: BigInt(row.balance),
    totalClaimed: BigInt(row.total_claimed),
    withdrawRequestedAt: Number(row.withdraw_requested_at),
    refundNonce: BigInt(row.refund_nonce),
    syncedAt: Number(row.synced_at),
    deposited: BigInt(row.deposited),
    refunded: BigInt(row.refunded),
    settled: BigInt(row.settled),
    lastClaimTx: row.last_claim_tx,
    lastRefundTx: row.last_refund_tx,
    refundVoucher: row.refund_voucher,
    refundAsked: row.refund_asked,
    refundAmount: row.refund_amount,
    lastRequestAt: Number(row.last_request_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The column values of a record, in CHANNEL_COLUMNS order. */
export function rowValues(record: ChannelRecord): (string | number)[] {
  return [
    record.channelId,
    record.network,
    record.config.payer.toLowerCase(),
    JSON.stringify(record.config),
    record.chargedCumulative.toString(),
    record.signedMaxClaimable.toString(),
    record.signature,
    record.balance.toString(),
    record.totalClaimed.toString(),
    record.withdrawRequestedAt,
    record.refundNonce.toString(),
    record.syncedAt,
    record.deposited.toString(),
    record.refunded.toString(),
    record.settled.toString(),
    record.lastClaimTx,
    record.lastRefundTx,
    record.refundVoucher,
    record.refundAsked,
    record.refundAmount,
    record.lastRequestAt,
    needsClaim(record) ? 1 : 0,
    record.createdAt,
    record.updatedAt,
  ];
}

export const CHANNEL_COLUMNS = [
  'channel_id',
  'network',
  'payer',
  'config',
  'charged_cumulative',
  'signed_max_claimable',
  'signature',
  'balance',
  'total_claimed',
  'withdraw_requested_at',
  'refund_nonce',
  'synced_at',
  'deposited',
  'refunded',
  'settled',
  'last_claim_tx',
  'last_refund_tx',
  'refund_voucher',
  'refund_asked',
  'refund_amount',
  'last_request_at',
  'outstanding',
  'created_at',
  'updated_at',
] as const;

/** Columns added to the channels table after it first shipped, and their value in older rows. */
export const ADDED_CHANNEL_COLUMNS = [
  ['refund_voucher', "''"],
  ['refund_asked', "''"],
  ['refund_amount', "''"],
] as const;

/** Columns of the channel_charges table, in chargeValues() order. */
export const CHARGE_COLUMNS = ['channel_id', 'cumulative', 'network', 'payer', 'model', 'amount', 'request_hash', 'result', 'created_at'] as const;

export interface ChargeRow {
  channel_id: string;
  cumulative: string;
  network: string;
  payer: string;
  model: string;
  amount: string;
  request_hash: string;
  result: string;
  created_at: string | Date;
}

/** A charge's column values; its time as ISO text (SQLite; PostgreSQL reads it into its timestamptz column). */
export function chargeValues(charge: ChannelCharge): string[] {
  return [
    charge.channelId.toLowerCase(),
    charge.cumulative.toString(),
    charge.network,
    charge.payer,
    charge.model,
    charge.amount.toString(),
    charge.requestHash,
    JSON.stringify(charge.result),
    new Date(charge.createdAt).toISOString(),
  ];
}

export function chargeFromRow(row: ChargeRow): ChannelCharge {
  return {
    channelId: row.channel_id,
    cumulative: BigInt(row.cumulative),
    network: row.network,
    payer: row.payer,
    model: row.model,
    amount: BigInt(row.amount),
    requestHash: row.request_hash,
    result: JSON.parse(row.result) as ChannelCharge['result'],
    createdAt: new Date(row.created_at).getTime(),
  };
}
