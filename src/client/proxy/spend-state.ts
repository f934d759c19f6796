// The spend file folded into what the caps and the account read: every call's hold or charge, the sums over the
// last hour and day (kept as running sums: a cap check costs the same after ten calls or ten thousand), what went
// into payment channels and came back, and the payees seen.
import type { OutcomeProof, SpendRecord } from './spend-log.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export interface Spend {
  id: string;
  at: number;
  /** the ceiling signed until the receipt arrives, then the charge */
  amount: bigint;
  scheme: string;
  network: string;
  surface: string;
  settled: boolean;
  model?: string;
  promptTokens?: number;
  completionTokens?: number;
  /** position in the time-ordered list the windows read */
  position: number;
}

/** A sum over the spends of the last `width` milliseconds. */
class RollingWindow {
  readonly width: number;
  /** the oldest spend still counted, as a position in the list */
  first = 0;
  sum = 0n;
  constructor(width: number) {
    this.width = width;
  }
}

export interface ChannelEscrow {
  network: string;
  channel: string;
  salt: string;
  deposited: bigint;
  refunded: bigint;
}

export class SpendState {
  readonly spends = new Map<string, Spend>();
  /** held spends whose outcome was not seen, with what can tell it (chain-outcomes.ts, channel-lanes.ts) */
  readonly unknown = new Map<string, OutcomeProof>();
  /** spends in the order they were signed (the windows count from their `first`) */
  #ordered: Spend[] = [];
  #base = 0;
  readonly hour = new RollingWindow(HOUR_MS);
  readonly day = new RollingWindow(DAY_MS);
  /** every spend, held or charged */
  total = 0n;
  /** of which paid by payment-channel vouchers (taken from escrow, already out of the wallet) */
  channelTotal = 0n;
  /** escrow per channel: what went in and what came back */
  readonly escrows = new Map<string, ChannelEscrow>();
  #deposits = new Map<string, { channel: string; amount: bigint }>();
  escrowIn = 0n;
  escrowOut = 0n;
  /** payee and asset per gateway and network */
  readonly payees = new Map<string, { payTo: string; asset: string }>();
  caps: Extract<SpendRecord, { kind: 'caps' }> | undefined;

  apply(record: SpendRecord): void {
    switch (record.kind) {
      case 'hold': {
        if (this.spends.has(record.id)) return;
        const spend: Spend = {
          id: record.id,
          at: record.at,
          amount: BigInt(record.amount),
          scheme: record.scheme,
          network: record.network,
          surface: record.surface,
          settled: false,
          position: this.#base + this.#ordered.length,
        };
        this.spends.set(spend.id, spend);
        this.#ordered.push(spend);
        this.#change(spend, spend.amount);
        return;
      }
      case 'charged': {
        const spend = this.spends.get(record.id);
        if (!spend) return;
        const charged = BigInt(record.amount);
        this.unknown.delete(record.id);
        this.#change(spend, charged - spend.amount);
        spend.amount = charged;
        spend.settled = true;
        if (record.model !== undefined) spend.model = record.model;
        if (record.promptTokens !== undefined) spend.promptTokens = record.promptTokens;
        if (record.completionTokens !== undefined) spend.completionTokens = record.completionTokens;
        return;
      }
      case 'released': {
        const spend = this.spends.get(record.id);
        this.unknown.delete(record.id);
        if (spend) {
          this.#change(spend, -spend.amount);
          spend.amount = 0n;
          this.spends.delete(record.id);
          return;
        }
        const deposit = this.#deposits.get(record.id);
        if (deposit) {
          this.#deposits.delete(record.id);
          this.escrowIn -= deposit.amount;
          this.escrows.get(deposit.channel)!.deposited -= deposit.amount;
        }
        return;
      }
      case 'unknown': {
        if (this.spends.get(record.id)?.settled === false) this.unknown.set(record.id, record.proof);
        return;
      }
      case 'deposit': {
        const amount = BigInt(record.amount);
        this.#deposits.set(record.id, { channel: record.channel, amount });
        this.escrowIn += amount;
        this.#escrow(record).deposited += amount;
        return;
      }
      case 'refund': {
        const amount = BigInt(record.amount);
        this.escrowOut += amount;
        this.#escrow({ ...record, salt: '' }).refunded += amount;
        return;
      }
      case 'payee': {
        // the first one written is the one allowed (two processes learning at once agree on it)
        const key = payeeKey(record.gateway, record.network);
        if (!this.payees.has(key)) this.payees.set(key, { payTo: record.payTo, asset: record.asset });
        return;
      }
      case 'caps':
        this.caps = record;
        return;
    }
  }

  /** what sits in payment channels: deposited, not refunded */
  get escrowed(): bigint {
    return this.escrowIn - this.escrowOut;
  }

  /** what left the wallet: payments other than vouchers, and everything in escrow (vouchers are paid from it) */
  get walletDrop(): bigint {
    return this.total - this.channelTotal + this.escrowed;
  }

  /** of the escrow, what no voucher has claimed yet: the buyer's money still, returned by a refund */
  get unspentEscrow(): bigint {
    const unspent = this.escrowed - this.channelTotal;
    return unspent > 0n ? unspent : 0n;
  }

  /** spent in the window ending now */
  windowSum(window: RollingWindow, now: number): bigint {
    const cutoff = now - window.width;
    while (window.first < this.#base + this.#ordered.length) {
      const oldest = this.#ordered[window.first - this.#base]!;
      if (oldest.at > cutoff) break;
      window.sum -= oldest.amount;
      window.first++;
    }
    this.#forget();
    return window.sum;
  }

  /** the spends inside a window, oldest first (what reopens it, one by one) */
  *inWindow(window: RollingWindow, now: number): Generator<Spend> {
    this.windowSum(window, now);
    for (let i = window.first - this.#base; i < this.#ordered.length; i++) yield this.#ordered[i]!;
  }

  #change(spend: Spend, delta: bigint): void {
    if (delta === 0n) return;
    this.total += delta;
    if (spend.scheme === 'batch-settlement') this.channelTotal += delta;
    for (const window of [this.hour, this.day]) if (spend.position >= window.first) window.sum += delta;
  }

  /** drops spends older than a day from the ordered list (they stay in `spends` for the account) */
  #forget(): void {
    const drop = Math.min(this.hour.first, this.day.first) - this.#base;
    if (drop < 4096) return;
    this.#ordered = this.#ordered.slice(drop);
    this.#base += drop;
  }

  #escrow(record: { network: string; channel: string; salt: string }): ChannelEscrow {
    let escrow = this.escrows.get(record.channel);
    if (!escrow) {
      escrow = { network: record.network, channel: record.channel, salt: record.salt, deposited: 0n, refunded: 0n };
      this.escrows.set(record.channel, escrow);
    }
    if (!escrow.salt && record.salt) escrow.salt = record.salt;
    return escrow;
  }
}

export const payeeKey = (gateway: string, network: string): string => `${gateway} ${network}`;
