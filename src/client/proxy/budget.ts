// The caps applied to the spend file: a payment's ceiling is held before anything is signed, and only if every cap
// still has room for it once everything written before the hold (by this process or another) is counted. The
// hold is corrected to the charge when the receipt arrives, or released when the gateway says nothing moved.
// Anything wrong with the file refuses the payment (fail closed).
import { randomUUID } from 'node:crypto';
import { capRefusal, depositRoom, type CapRefusal, type Caps } from './caps.ts';
import { SpendFileError, SpendLog, type SpendRecord } from './spend-log.ts';
import { SpendState } from './spend-state.ts';

export interface HoldFacts {
  scheme: string;
  network: string;
  /** the route paid for (/v1/messages, mcp://tool/chat, ...) */
  surface: string;
}

/** What a call was charged, and what the account shows of it. */
export interface ChargeFacts {
  model?: string;
  promptTokens?: number;
  completionTokens?: number;
}

export class CapExceeded extends Error {
  override name = 'CapExceeded';
  readonly refusal: CapRefusal;
  constructor(refusal: CapRefusal) {
    super(`spending cap ${refusal.cap} reached`);
    this.refusal = refusal;
  }
}

export class Budget {
  readonly caps: Caps;
  readonly log: SpendLog;
  readonly state = new SpendState();
  readonly #now: () => number;

  constructor(log: SpendLog, caps: Caps, now: () => number = Date.now) {
    this.log = log;
    this.caps = caps;
    this.#now = now;
    this.refresh();
  }

  now(): number {
    return this.#now();
  }

  /** Folds in what any process appended since the last read. */
  refresh(): SpendState {
    this.log.catchUp((record) => this.state.apply(record));
    return this.state;
  }

  /**
   * Holds `ceiling` for a payment about to be signed, or throws CapExceeded (nothing held). `outOfWallet`: the
   * payment takes money from the wallet rather than from a channel's escrow.
   */
  hold(ceiling: bigint, facts: HoldFacts, outOfWallet: boolean): string {
    const id = randomUUID();
    const at = this.#now();
    const record: SpendRecord = { kind: 'hold', id, at, amount: ceiling.toString(), ...facts };
    this.#claim(record, id, () => capRefusal(this.caps, this.state, ceiling, at, outOfWallet));
    return id;
  }

  /**
   * Holds a deposit of at most `wanted` and at least `needed` into a channel, as large as max-total allows; throws
   * CapExceeded when even `needed` does not fit. Returns the deposit's id and amount.
   */
  holdDeposit(needed: bigint, wanted: bigint, facts: { network: string; channel: string; salt: string }): { id: string; amount: bigint } {
    this.refresh();
    const room = depositRoom(this.caps, this.state);
    const amount = room === undefined || room >= wanted ? wanted : room > needed ? room : needed;
    const id = randomUUID();
    const record: SpendRecord = { kind: 'deposit', id, at: this.#now(), amount: amount.toString(), ...facts };
    this.#claim(record, id, () => {
      const left = depositRoom(this.caps, this.state);
      if (left === undefined || left >= amount) return undefined;
      return { cap: 'max-total', limit: this.caps.total!, spent: this.state.total, ceiling: amount, escrowed: this.state.unspentEscrow };
    });
    return { id, amount };
  }

  /** The call's charge: the hold becomes it (at most the hold: a gateway cannot charge above what was signed). */
  charged(id: string, amount: bigint, facts: ChargeFacts = {}): void {
    const held = this.state.spends.get(id)?.amount;
    const charge = held !== undefined && amount > held ? held : amount;
    this.#settle({ kind: 'charged', id, amount: charge.toString(), ...facts });
  }

  /** A hold or deposit that moved nothing. */
  released(id: string): void {
    this.#settle({ kind: 'released', id });
  }

  record(record: SpendRecord): void {
    this.#append(record);
  }

  /**
   * Appends the record, then reads the file up to it: `refuse` is asked with everything before it counted. A
   * refusal is undone by a release right after (other processes may briefly count it: they err on the safe side).
   */
  #claim(record: SpendRecord & { id: string }, id: string, refuse: () => CapRefusal | undefined): void {
    this.log.append(record);
    let refusal: CapRefusal | undefined;
    let seen = false;
    this.log.catchUp((next) => {
      if ('id' in next && next.id === id && next.kind === record.kind) {
        seen = true;
        refusal = refuse();
      }
      this.state.apply(next);
    });
    // a file that does not give back what was just appended to it (truncated, replaced) counts nothing reliably
    if (!seen) throw new SpendFileError(`the spend file ${this.log.path} did not read back the hold just written to it: nothing is signed`);
    if (refusal) {
      this.#settle({ kind: 'released', id });
      throw new CapExceeded(refusal);
    }
  }

  /**
   * A charge or release: appended, and applied here at once rather than read back (applying either twice changes
   * nothing, so the next read of the file, which brings it again, is harmless). A hold reads everything first.
   */
  #settle(record: Extract<SpendRecord, { kind: 'charged' | 'released' }>): void {
    this.log.append(record);
    this.state.apply(record);
  }

  #append(record: SpendRecord): void {
    this.log.append(record);
    this.refresh();
  }
}
