// Payment channels (x402 `batch-settlement`) through the official @x402/evm client: one deposit, then a voucher per
// call. A channel's calls run one at a time (each voucher extends the last charge), so calls in flight at once get
// channels of their own: lanes, one channel each (the config's salt is the lane's number), opened only when every
// open one is busy, up to --channels.
//
// The official BatchSettlementEvmScheme decides deposits and top-ups, recovers a channel it knows nothing of from
// the escrow, resynchronises from the gateway's corrective 402 and refunds. A voucher on a funded channel is signed
// here with its official signVoucher, skipping what the scheme would recompute on every call (the channel's config
// and id: fixed per lane). A deposit is as large as --deposit (or 1 USDC, or 20 calls' ceiling), max-total and the
// wallet allow.
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { ClientEvmSigner } from '@x402/evm';
import {
  BatchSettlementEvmScheme,
  computeChannelId,
  InMemoryClientChannelStorage,
  readChannelBalanceAndTotalClaimed,
  signVoucher,
  updateChannelFromSettle,
} from '@x402/evm/batch-settlement/client';
import { erc20Abi, type Hex } from 'viem';
import { CapExceeded, type Budget } from './budget.ts';
import type { Receipt } from './receipts.ts';
import { formatUsdc } from '../usdc.ts';

/**
 * A deposit aims at 1 USDC or 20 calls at the call's ceiling, whichever is more, unless --deposit says otherwise:
 * every top-up is a transaction (measured: 20 ceilings of a short chat, 0.02 USDC, had the channel topped up every
 * 19 calls and halved the rate), and what is left comes back with a refund.
 */
const DEPOSIT_CALLS = 20n;
const DEPOSIT_FLOOR = 1_000_000n;

/** Which process family opens the channel: the proxy's lanes and the MCP bridge's never share a channel. */
export type LaneOwner = 'proxy' | 'mcp';

/** The salt of lane `index`: lane 0 of the proxy is the official client's default channel. */
export function laneSalt(owner: LaneOwner, index: number): Hex {
  return `0x${owner === 'proxy' ? '00' : '01'}${index.toString(16).padStart(62, '0')}` as Hex;
}

type ChannelConfig = ReturnType<BatchSettlementEvmScheme['buildChannelConfig']>;

class Lane {
  readonly salt: Hex;
  readonly storage = new InMemoryClientChannelStorage();
  readonly scheme: BatchSettlementEvmScheme;
  readonly config: ChannelConfig;
  readonly channelId: Hex;
  /** the token deposits are made in */
  readonly token: Hex;
  busy = true;
  /** the deposit the current call holds (set by the deposit strategy) */
  deposit: { id: string; amount: bigint } | undefined;

  constructor(signer: ClientEvmSigner, salt: Hex, requirement: PaymentRequirements, sizeDeposit: (lane: Lane, needed: bigint, requestAmount: bigint) => Promise<string>) {
    this.salt = salt;
    this.token = requirement.asset as Hex;
    this.scheme = new BatchSettlementEvmScheme(signer, {
      storage: this.storage,
      salt,
      depositStrategy: (context) => sizeDeposit(this, BigInt(context.minimumDepositAmount), BigInt(context.requestAmount)),
    });
    this.config = this.scheme.buildChannelConfig(requirement);
    this.channelId = computeChannelId(this.config, requirement.network).toLowerCase() as Hex;
  }
}

/** What a refund of the channels returned, and the channels it could not refund (why). */
export interface RefundOutcome {
  refunds: Array<{ channel: string; salt: Hex; amount: bigint; transaction: string }>;
  failures: string[];
}

/** One channel payment in flight, on its lane until done() frees it. */
export interface ChannelPayment {
  payload: PaymentPayload['payload'];
  /** the receipt says what was charged: the lane's client counts it */
  delivered(receipt: Receipt, charged: bigint): Promise<void>;
  /** the gateway refused the voucher with this 402: true when the client resynchronised and may sign again */
  refused(required: PaymentRequired | undefined): Promise<boolean>;
  /** the call failed (`known`: the gateway said nothing was charged) or its outcome is unknown */
  failed(known: boolean): Promise<void>;
  done(): void;
}

export interface ChannelLanesOptions {
  signer: ClientEvmSigner;
  budget: Budget;
  network: string;
  owner: LaneOwner;
  /** channels open at once at most (calls in flight beyond it wait for a lane) */
  maxLanes: number;
  /** the deposit to aim for, atomic units (default: 1 USDC, or 20 times the call's ceiling if more) */
  deposit?: bigint;
}

export class ChannelLanes {
  readonly #options: ChannelLanesOptions;
  /** lanes per channel shape (payee, token, receiver authorizer, withdraw delay, network) */
  readonly #lanes = new Map<string, Lane[]>();
  readonly #waiting = new Map<string, Array<(lane: Lane) => void>>();

  constructor(options: ChannelLanesOptions) {
    this.#options = options;
  }

  /**
   * Signs the payment for a call on a free lane (waiting for one when all are busy and no more may open). `hold`:
   * the budget's hold of the call's ceiling, which the lane settles if the call's outcome is never told.
   */
  async pay(requirement: PaymentRequirements, hold: string): Promise<ChannelPayment> {
    for (let mayOpen = true; ; mayOpen = false) {
      const { lane, opened } = await this.#acquire(requirement, mayOpen);
      try {
        const payload = await this.#payload(lane, requirement);
        return this.#payment(lane, requirement, payload, hold);
      } catch (error) {
        const lanes = this.#lanes.get(shapeKey(requirement))!;
        if (error instanceof CapExceeded && opened && lanes.length > 1) {
          // no room under the caps for another lane's deposit, while lanes of this shape hold theirs: the call waits
          // for one of them rather than being refused (calls sent in parallel, as agents send them)
          lanes.splice(lanes.indexOf(lane), 1);
          continue;
        }
        this.#release(requirement, lane);
        throw error;
      }
    }
  }

  /**
   * Refunds every channel of this shape that holds money: its lanes', and those of `salts` (the spend file names
   * every channel it deposited into, this process's or not). One channel's failure does not stop the others'.
   */
  async refundAll(requirement: PaymentRequirements, url: string, doFetch: typeof fetch, salts: Iterable<Hex>): Promise<RefundOutcome> {
    const lanes = [...(this.#lanes.get(shapeKey(requirement)) ?? [])];
    const known = new Set(lanes.map((lane) => lane.salt));
    for (const salt of salts) {
      if (known.has(salt)) continue;
      known.add(salt);
      // a lane of its own for the refund only: the lanes that pay calls are not changed
      lanes.push(new Lane(this.#options.signer, salt, requirement, () => Promise.reject(new Error('a refund deposits nothing'))));
    }
    const outcome: RefundOutcome = { refunds: [], failures: [] };
    for (const lane of lanes) {
      try {
        const [balance, claimed] = (await readChannelBalanceAndTotalClaimed(this.#options.signer, lane.channelId)) as [bigint, bigint];
        if (balance <= claimed) continue;
        const settled = await lane.scheme.refund(url, { fetch: doFetch });
        const charged = settled.extra?.channelState as { chargedCumulativeAmount?: unknown } | undefined;
        if (typeof charged?.chargedCumulativeAmount === 'string') this.#settleUnknown(lane, BigInt(charged.chargedCumulativeAmount));
        const amount = /^\d+$/.test(settled.amount ?? '') ? BigInt(settled.amount!) : 0n;
        outcome.refunds.push({ channel: lane.channelId, salt: lane.salt, amount, transaction: settled.transaction });
      } catch (error) {
        // everything in it was charged already (claimed or not): nothing to return
        if (/no_balance|no remaining balance/.test((error as Error).message)) continue;
        outcome.failures.push(`channel ${lane.channelId}: ${(error as Error).message}`);
      }
    }
    return outcome;
  }

  /** An idle lane of this shape, else a new one (`opened`) while `mayOpen` and there are fewer than maxLanes, else the next one freed. */
  async #acquire(requirement: PaymentRequirements, mayOpen: boolean): Promise<{ lane: Lane; opened: boolean }> {
    const key = shapeKey(requirement);
    const lanes = this.#lanes.get(key) ?? [];
    this.#lanes.set(key, lanes);
    const idle = lanes.find((lane) => !lane.busy);
    if (idle) {
      idle.busy = true;
      return { lane: idle, opened: false };
    }
    if (mayOpen && lanes.length < this.#options.maxLanes) {
      // the first salt no lane holds (a lane dropped in pay() leaves a gap)
      const held = new Set(lanes.map((lane) => lane.salt));
      let index = 0;
      while (held.has(laneSalt(this.#options.owner, index))) index++;
      const lane = new Lane(this.#options.signer, laneSalt(this.#options.owner, index), requirement, (l, needed, amount) => this.#sizeDeposit(l, needed, amount));
      lanes.push(lane);
      return { lane, opened: true };
    }
    const lane = await new Promise<Lane>((resolve) => {
      const queue = this.#waiting.get(key) ?? [];
      queue.push(resolve);
      this.#waiting.set(key, queue);
    });
    return { lane, opened: false };
  }

  #release(requirement: PaymentRequirements, lane: Lane): void {
    const next = this.#waiting.get(shapeKey(requirement))?.shift();
    if (next) next(lane);
    else lane.busy = false;
  }

  async #payload(lane: Lane, requirement: PaymentRequirements): Promise<PaymentPayload['payload']> {
    lane.deposit = undefined;
    const known = await lane.storage.get(lane.channelId);
    const balance = BigInt(known?.balance ?? '0');
    const ceiling = BigInt(known?.chargedCumulativeAmount ?? '0') + BigInt(requirement.amount);
    if (balance > 0n && ceiling <= balance) {
      const voucher = await signVoucher(this.#options.signer, lane.channelId, ceiling.toString(), requirement.network);
      return { type: 'voucher', channelConfig: lane.config, voucher };
    }
    // a channel this lane knows nothing of yet, or one that needs a top-up: the official client decides
    try {
      return (await lane.scheme.createPaymentPayload(2, requirement)).payload;
    } catch (error) {
      // the deposit strategy may have held one before the signing failed
      const deposit = lane.deposit as Lane['deposit'];
      if (deposit) this.#options.budget.released(deposit.id);
      lane.deposit = undefined;
      throw error;
    }
  }

  /**
   * The deposit strategy: as much as aimed for, as max-total allows and the wallet holds, and never less than the
   * call needs. A wallet holding less than that cannot fund the channel: the call goes to the next scheme offered.
   */
  async #sizeDeposit(lane: Lane, needed: bigint, requestAmount: bigint): Promise<string> {
    const byCalls = DEPOSIT_CALLS * requestAmount;
    const aimed = this.#options.deposit ?? (byCalls > DEPOSIT_FLOOR ? byCalls : DEPOSIT_FLOOR);
    const held = await this.#walletHolds(lane.token);
    if (held !== undefined && held < needed) throw new Error(`the wallet holds ${formatUsdc(held)} USDC, less than the ${formatUsdc(needed)} USDC a payment channel's deposit needs`);
    const wanted = held !== undefined && held < aimed ? held : aimed;
    lane.deposit = this.#options.budget.holdDeposit(needed, wanted > needed ? wanted : needed, {
      network: this.#options.network,
      channel: lane.channelId,
      salt: lane.salt,
    });
    return lane.deposit.amount.toString();
  }

  #payment(lane: Lane, requirement: PaymentRequirements, payload: PaymentPayload['payload'], hold: string): ChannelPayment {
    const deposit = lane.deposit;
    // what the channel had been charged as this voucher was signed: its ceiling less this call's price
    const base = BigInt((payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount) - BigInt(requirement.amount);
    let released = false;
    return {
      payload,
      delivered: async (receipt, charged) => {
        await updateChannelFromSettle(lane.storage, {
          server: {
            chargedAmount: charged.toString(),
            ...(typeof receipt.extra?.channelState?.chargedCumulativeAmount === 'string' ? { chargedCumulativeAmount: receipt.extra.channelState.chargedCumulativeAmount } : {}),
          },
          local: { channelId: lane.channelId, requestAmount: requirement.amount, ...(deposit ? { depositAmount: deposit.amount.toString() } : {}) },
        });
        // the gateway took this voucher: it had charged the channel `base` before this call
        this.#settleUnknown(lane, base);
      },
      refused: async (required) => {
        await this.#depositLanded(lane, deposit);
        if (required !== undefined && (await lane.scheme.processCorrectivePaymentRequired(required))) {
          // resynchronised: the lane's client holds what the gateway has charged the channel
          const known = await lane.storage.get(lane.channelId);
          if (known?.chargedCumulativeAmount !== undefined) this.#settleUnknown(lane, BigInt(known.chargedCumulativeAmount));
          return true;
        }
        // refused for another reason (its channel refunded by `--refund` under it, a balance it no longer has): what
        // the lane knew of its channel is stale; forgotten, the next payment learns it again from the escrow
        const stale = (await lane.storage.get(lane.channelId)) !== undefined;
        await lane.storage.delete(lane.channelId);
        return stale && required !== undefined;
      },
      failed: async (known) => {
        await this.#depositLanded(lane, deposit);
        // the call's charge is unknown. The lane signs its next voucher as if nothing was charged: taken, nothing was
        // (its hold released then); else the gateway's corrective 402 says what was, and the lane resynchronises.
        // Kept in the spend file: a later process's first answer on this channel settles it just as well
        if (!known) {
          this.#options.budget.record({ kind: 'unknown', id: hold, proof: { type: 'voucher', network: this.#options.network, channel: lane.channelId, base: base.toString() } });
        }
      },
      done: () => {
        if (released) return;
        released = true;
        this.#release(requirement, lane);
      },
    };
  }

  /** What the wallet holds of `token` (undefined for a signer that cannot read the chain). */
  async #walletHolds(token: Hex): Promise<bigint | undefined> {
    const { signer } = this.#options;
    if (!signer.readContract) return undefined;
    return (await signer.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [signer.address] })) as bigint;
  }

  /**
   * The gateway has charged `lane`'s channel `charged` in all: its calls whose outcome was not told (this process's or
   * an earlier one's, from the spend file) cost what it charged above their base, each at most its price, in turn;
   * the rest of their holds is released. Calls paid after a resynchronisation have a later base: what was charged
   * up to it went to the calls before.
   */
  #settleUnknown(lane: Lane, charged: bigint): void {
    const { budget } = this.#options;
    const unknown: Array<{ id: string; base: bigint }> = [];
    for (const [id, proof] of budget.state.unknown) if (proof.type === 'voucher' && proof.channel === lane.channelId) unknown.push({ id, base: BigInt(proof.base) });
    unknown.sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
    let left = 0n;
    for (const [i, call] of unknown.entries()) {
      if (i === 0 || call.base !== unknown[i - 1]!.base) {
        const next = unknown.slice(i).find((later) => later.base !== call.base)?.base;
        const end = next !== undefined && next < charged ? next : charged;
        left = end > call.base ? end - call.base : 0n;
      }
      const price = budget.state.spends.get(call.id)?.amount ?? 0n;
      const part = left < price ? left : price;
      left -= part;
      if (part > 0n) budget.charged(call.id, part);
      else budget.released(call.id);
    }
  }

  /**
   * After a call with a deposit that did not deliver: the deposit lands before the work, so it may be in the
   * escrow whatever became of the call. The escrow says: a deposit that is not there is released from the caps.
   */
  async #depositLanded(lane: Lane, deposit: { id: string; amount: bigint } | undefined): Promise<void> {
    if (!deposit) return;
    const before = BigInt((await lane.storage.get(lane.channelId))?.balance ?? '0');
    const [balance] = (await readChannelBalanceAndTotalClaimed(this.#options.signer, lane.channelId)) as [bigint, bigint];
    if (balance >= before + deposit.amount) {
      // it landed: the lane's client learns the new balance from the escrow at its next call
      await lane.storage.delete(lane.channelId);
    } else {
      this.#options.budget.released(deposit.id);
    }
  }
}

function shapeKey(requirement: PaymentRequirements): string {
  const extra = requirement.extra ?? {};
  return [requirement.network, requirement.payTo, requirement.asset, extra.receiverAuthorizer, extra.withdrawDelay].join(' ').toLowerCase();
}
