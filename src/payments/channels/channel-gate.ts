// Paid calls under x402 `batch-settlement`: a payer's channel in the escrow backs off-chain cumulative vouchers,
// so a call costs a signature check instead of a transaction. What the gate hands over once it knows the proof
// is a channel payment on a rail that offers channels.
//
// Per request, holding the channel's lock (one request per channel at a time, across instances):
//   voucher ceiling == charged so far + this call's price, else the corrective 402 (the signed voucher state,
//   so a client that lost its state resynchronises) -> verify (locally from the mirrored escrow state while it is
//   fresh; else, and for every deposit, by the facilitator) -> a deposit is submitted before the work (it is the
//   payer's money in the payer's channel, not a charge) -> work -> on success only, the charge (the quote, or a
//   metered result's cost, never above the quote) and the voucher are committed -> the receipt with
//   extra.chargedAmount and extra.channelState. Failed work leaves the channel as it was.
// A channel the ledger does not know (a lost record) starts from the escrow's totalClaimed, as the spec says.
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import {
  BATCH_SETTLEMENT_SCHEME,
  CHANNEL_BUSY,
  channelPayloadSchema,
  configMismatch,
  CUMULATIVE_MISMATCH,
  voucherSignedByAuthorizer,
  ZERO_ADDRESS,
  type ChannelPayload,
} from '../../x402/batch-settlement.ts';
import type { EvmNetwork } from '../../x402/networks.ts';
import { newChannelRecord, type ChannelRecord, type ChannelStore } from '../../store/channel-store.ts';
import type { PaymentProof, PaymentRequirement, Wire } from '../../x402/model.ts';
import { FACILITATOR_UNAVAILABLE, type PaidCall, type PaymentOutcome, type Refusal } from '../outcome.ts';
import type { ChannelOffer, PaymentRail } from '../rails.ts';
import type { OnChainChannel } from './channel-facilitator.ts';
import { NO_CHANNEL_OBSERVER, type ChannelObserver } from './channel-metrics.ts';

export interface ChannelGateOptions {
  store: ChannelStore;
  log: Logger;
  /** how long the mirrored escrow state of a channel lets vouchers be verified without the chain */
  freshStateMs?: number;
  /** how long a request waits for a channel another request holds */
  lockWaitMs?: number;
  /** told of deposits, charges and refunds (the channel metrics) */
  observe?: ChannelObserver;
}

export interface ChannelCall {
  call: PaidCall;
  rail: PaymentRail & { channels: ChannelOffer };
  requirement: PaymentRequirement;
  proof: PaymentProof;
  wires: Wire[];
}
/** Mirrored state younger than this verifies a voucher locally (withdrawals take at least 15 minutes to complete). */
const DEFAULT_FRESH_STATE_MS = 60_000;

const CHANNEL_BUSY_REFUSAL: Refusal = {
  kind: 'refused',
  code: 'payment_in_progress',
  message: `${CHANNEL_BUSY}: another request holds this payment channel; retry shortly`,
  retryAfterSeconds: 1,
};

const DEFAULT_LOCK_WAIT_MS = 30_000;

export class ChannelGate {
  readonly #store: ChannelStore;
  readonly #log: Logger;
  readonly #freshStateMs: number;
  readonly #lockWaitMs: number;
  readonly #observe: ChannelObserver;
  readonly #holder = `channels-${randomUUID()}`;
  /** requests of this instance queued per channel, so only the head asks the database for the lock */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(options: ChannelGateOptions) {
    this.#store = options.store;
    this.#log = options.log;
    this.#freshStateMs = options.freshStateMs ?? DEFAULT_FRESH_STATE_MS;
    this.#lockWaitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
    this.#observe = options.observe ?? NO_CHANNEL_OBSERVER;
  }

  async handle(input: ChannelCall): Promise<PaymentOutcome> {
    const { proof, rail } = input;
    if (proof.wire !== 2) return paymentRequired(rail, 'unsupported_scheme: batch-settlement exists only in x402 version 2 (PAYMENT-SIGNATURE)');
    const parsed = channelPayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return paymentRequired(rail, 'invalid_batch_settlement_evm_payload: not a deposit, voucher or refund of batch-settlement');
    const payload = parsed.data;
    const network = rail.network as EvmNetwork;
    const terms = {
      receiver: rail.payTo,
      receiverAuthorizer: rail.channels.facilitator.receiverAuthorizer,
      token: rail.asset,
      withdrawDelay: rail.channels.withdrawDelay,
    };
    const mismatch = configMismatch(payload.channelConfig, payload.voucher.channelId, network.chainId, terms);
    if (mismatch) return paymentRequired(rail, mismatch);
    const channelId = payload.voucher.channelId.toLowerCase();
    if (payload.type === 'refund') {
      if (!input.call.refundOnly) return paymentRequired(rail, 'invalid_batch_settlement_evm_payload_type: a refund is sent with GET to the paid URL, without a body');
      return this.#serialised(channelId, () => this.#refund(input, payload, channelId));
    }
    if (input.call.refundOnly) return paymentRequired(rail, 'invalid_batch_settlement_evm_payload_type: only a refund is taken with GET; a paid call is a POST');
    return this.#serialised(channelId, () => this.#pay(input, payload, channelId));
  }

  /** Runs `task` holding the channel: queued behind this instance's requests on it, then the database lock. */
  async #serialised(channelId: string, task: () => Promise<PaymentOutcome>): Promise<PaymentOutcome> {
    const previous = this.#queues.get(channelId) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = previous.then(() => mine);
    this.#queues.set(channelId, tail);
    try {
      await previous;
      // one process owns an embedded ledger: its queue above is the whole serialisation
      if (this.#store.singleInstance) return await task();
      if (!(await this.#lock(channelId))) return CHANNEL_BUSY_REFUSAL;
      try {
        return await task();
      } finally {
        await this.#store.unlock(channelId, this.#holder).catch((error: unknown) => this.#log.warn({ err: error, channelId }, 'channel unlock failed'));
      }
    } finally {
      done();
      if (this.#queues.get(channelId) === tail) this.#queues.delete(channelId);
    }
  }

  /** Takes the channel's lock in the ledger, waiting up to lockWaitMs for another instance's request; false if it did not free. */
  async #lock(channelId: string): Promise<boolean> {
    const deadline = Date.now() + this.#lockWaitMs;
    let wait = 5;
    // the lease outlives any one request's work; a crashed holder's lapses after it
    while (!(await this.#store.lock(channelId, this.#holder, this.#lockWaitMs * 10))) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 100);
    }
    return true;
  }

  async #pay(input: ChannelCall, payload: Exclude<ChannelPayload, { type: 'refund' }>, channelId: string): Promise<PaymentOutcome> {
    const { call, rail, requirement, wires } = input;
    const facilitator = rail.channels.facilitator;
    const network = rail.network as EvmNetwork;
    const price = requirement.amount;
    const ceiling = BigInt(payload.voucher.maxClaimableAmount);
    // the client's extensions go along: the facilitator submits a Permit2 deposit's EIP-2612 permit from them
    const extensions = input.proof.extensions ? { extensions: input.proof.extensions } : {};
    const now = Date.now();

    let record = await this.#store.get(channelId);
    if (record && ceiling !== record.chargedCumulative + price) return this.#corrective(input, record);

    // verification: the mirrored state while fresh (an EOA voucher is an ECDSA recovery), else the chain
    let state: OnChainChannel;
    const local = payload.type === 'voucher' && record !== undefined && now - record.syncedAt < this.#freshStateMs && payload.channelConfig.payerAuthorizer !== ZERO_ADDRESS;
    if (local && record) {
      const signed = voucherSignedByAuthorizer(payload.channelConfig, channelId, ceiling, payload.voucher.signature, network.chainId);
      if (!signed) return paymentRequired(rail, 'invalid_batch_settlement_evm_voucher_signature');
      if (ceiling > record.balance) return paymentRequired(rail, 'invalid_batch_settlement_evm_cumulative_exceeds_balance');
      if (ceiling <= record.totalClaimed) return paymentRequired(rail, 'invalid_batch_settlement_evm_cumulative_below_claimed');
      state = record;
    } else {
      const verified = await facilitator.verify({ payload, ...extensions }, requirement).catch((error: unknown) => {
        this.#log.error({ err: error, channelId }, 'channel verify failed');
        return undefined;
      });
      if (!verified) return FACILITATOR_UNAVAILABLE;
      if (!verified.isValid) return paymentRequired(rail, verified.invalidReason);
      state = verified.state;
      if (!record) {
        // a channel this server has no record of: what is claimed on chain is the baseline (unclaimed charges of a lost record are forfeited)
        record = await this.#store.update(channelId, (current) =>
          current ?? { ...newChannelRecord(channelId, network.name, payload.channelConfig, now), chargedCumulative: state.totalClaimed, ...mirrored(state, now) },
        );
        if (!record) throw new Error('channel record not written');
        if (ceiling !== record.chargedCumulative + price) return this.#corrective(input, record);
      } else {
        record = await this.#store.update(channelId, (current) => current && { ...current, ...mirrored(state, now) });
        if (!record) throw new Error('channel record vanished');
      }
    }

    // a deposit lands before the work: the voucher it carries is backed only once it has
    let deposit: { transaction: string; amount: bigint } | undefined;
    if (payload.type === 'deposit') {
      const settled = await facilitator.settle({ payload, ...extensions }, requirement);
      if (!settled.success) {
        // the deposit may still land: the client retries the same payment, which then finds it on chain
        if (settled.pending) return { kind: 'pending', transaction: settled.transaction || null };
        return paymentRequired(rail, `settlement_failed: ${settled.errorReason}`);
      }
      const amount = BigInt(payload.deposit.amount);
      deposit = { transaction: settled.transaction, amount };
      const after: OnChainChannel = settled.state ?? { ...state, balance: state.balance + amount };
      state = after;
      record = await this.#store.update(channelId, (current) =>
        current && { ...current, ...mirrored(after, Date.now()), deposited: current.deposited + amount },
      );
      if (!record) throw new Error('channel record vanished');
      this.#observe.deposited(network.name, amount);
      this.#log.info({ channelId, network: network.name, tx: settled.transaction, amount: amount.toString() }, 'channel deposit settled');
    }

    const result = await call.work(call.metered ? {} : { charge: price });
    const charged = call.metered && result.cost !== undefined && result.cost < price ? result.cost : price;
    const base = ceiling - price;
    const committed = await this.#store.update(channelId, (current) =>
      current && {
        ...current,
        chargedCumulative: base + charged,
        signedMaxClaimable: ceiling,
        signature: payload.voucher.signature,
        lastRequestAt: Date.now(),
        updatedAt: Date.now(),
      },
    );
    if (!committed) throw new Error('channel record vanished');
    this.#observe.charged(network.name, call.model, charged);

    return {
      kind: 'delivered',
      status: 200,
      body: result.body,
      media: result.media,
      wires,
      receipt: {
        success: true,
        transaction: deposit?.transaction ?? '',
        network: network.name,
        payer: payload.channelConfig.payer,
        amount: charged,
        // the scheme's payment-response contract: the deposit's amount (or '' for a charge alone), the charge in extra
        schemeAmount: deposit ? deposit.amount.toString() : '',
        extra: { chargedAmount: charged.toString(), channelState: channelStateOf(committed) },
      },
    };
  }

  /**
   * A cooperative refund (no work runs): the zero-charge voucher must sign exactly what was charged; the
   * facilitator claims that (the refund voucher is a voucher for it) and returns what is left, or the
   * requested part of it, to the payer in one transaction. The claimed part is settled by the claimer.
   */
  async #refund(input: ChannelCall, payload: Extract<ChannelPayload, { type: 'refund' }>, channelId: string): Promise<PaymentOutcome> {
    const { rail, requirement, wires } = input;
    const facilitator = rail.channels.facilitator;
    const network = rail.network as EvmNetwork;
    const signed = BigInt(payload.voucher.maxClaimableAmount);
    const verified = await facilitator
      .verify({ payload }, requirement)
      .catch((error: unknown) => {
        this.#log.error({ err: error, channelId }, 'channel refund verify failed');
        return undefined;
      });
    if (!verified) return FACILITATOR_UNAVAILABLE;
    if (!verified.isValid) return paymentRequired(rail, verified.invalidReason);
    const state = verified.state;
    const now = Date.now();
    const record = await this.#store.update(channelId, (current) =>
      current
        ? { ...current, ...mirrored(state, now) }
        : { ...newChannelRecord(channelId, network.name, payload.channelConfig, now), chargedCumulative: state.totalClaimed, ...mirrored(state, now) },
    );
    if (!record) throw new Error('channel record not written');
    if (signed !== record.chargedCumulative) return this.#corrective(input, record);

    const claimedAfter = record.chargedCumulative > state.totalClaimed ? record.chargedCumulative : state.totalClaimed;
    const refundable = state.balance > claimedAfter ? state.balance - claimedAfter : 0n;
    if (refundable === 0n) return paymentRequired(rail, 'invalid_batch_settlement_evm_refund_no_balance');
    const requested = payload.amount === undefined ? refundable : BigInt(payload.amount);
    if (requested === 0n) return paymentRequired(rail, 'invalid_batch_settlement_evm_refund_amount_invalid');
    const amount = requested < refundable ? requested : refundable;
    const claims =
      record.chargedCumulative > state.totalClaimed
        ? [{ voucher: { channel: payload.channelConfig, maxClaimableAmount: signed.toString() }, signature: payload.voucher.signature, totalClaimed: record.chargedCumulative.toString() }]
        : [];
    const refundPayload = { ...payload, amount: amount.toString(), refundNonce: state.refundNonce.toString(), claims };
    const settled = await facilitator.settle({ payload: refundPayload }, requirement);
    if (!settled.success) {
      if (settled.pending) return { kind: 'pending', transaction: settled.transaction || null };
      return paymentRequired(rail, `settlement_failed: ${settled.errorReason}`);
    }
    const refunded = settled.amount ?? amount;
    const after = await this.#store.update(channelId, (current) =>
      current && {
        ...current,
        ...(settled.state ? mirrored(settled.state, Date.now()) : { balance: current.balance - refunded, totalClaimed: claimedAfter, refundNonce: current.refundNonce + 1n }),
        totalClaimed: claimedAfter,
        refunded: current.refunded + refunded,
        lastRefundTx: settled.transaction,
        updatedAt: Date.now(),
      },
    );
    if (!after) throw new Error('channel record vanished');
    this.#observe.refunded(network.name, refunded);
    if (claims.length > 0) this.#observe.claimed(network.name, record.chargedCumulative - state.totalClaimed);
    this.#log.info({ channelId, network: network.name, tx: settled.transaction, amount: refunded.toString() }, 'channel refunded');
    return {
      kind: 'delivered',
      status: 200,
      body: { channelId, refunded: refunded.toString(), transaction: settled.transaction, channelState: channelStateOf(after) },
      media: [],
      wires,
      receipt: {
        success: true,
        transaction: settled.transaction,
        network: network.name,
        payer: payload.channelConfig.payer,
        amount: 0n,
        schemeAmount: refunded.toString(),
        extra: { channelState: channelStateOf(after) },
      },
    };
  }

  /**
   * The corrective 402: the batch-settlement offer carries the channel as this server has it and the payer's
   * latest signed voucher, which the official client verifies before adopting the charged amount.
   */
  #corrective(input: ChannelCall, record: ChannelRecord): PaymentOutcome {
    return {
      kind: 'payment_required',
      reason: CUMULATIVE_MISMATCH,
      rails: [input.rail],
      amend: {
        scheme: BATCH_SETTLEMENT_SCHEME,
        network: input.rail.network.name,
        extra: {
          channelState: channelStateOf(record),
          ...(record.signature ? { voucherState: { signedMaxClaimable: record.signedMaxClaimable.toString(), signature: record.signature } } : {}),
        },
      },
    };
  }
}

/** A refusal that offers the rail again with `reason`. */
function paymentRequired(rail: PaymentRail, reason: string): PaymentOutcome {
  return { kind: 'payment_required', reason, rails: [rail] };
}

function mirrored(state: OnChainChannel, now: number): Pick<ChannelRecord, 'balance' | 'totalClaimed' | 'withdrawRequestedAt' | 'refundNonce' | 'syncedAt' | 'updatedAt'> {
  return { ...pickState(state), syncedAt: now, updatedAt: now };
}

function pickState(state: OnChainChannel): OnChainChannel {
  return { balance: state.balance, totalClaimed: state.totalClaimed, withdrawRequestedAt: state.withdrawRequestedAt, refundNonce: state.refundNonce };
}

/** The scheme's channel snapshot (amounts as decimal strings). */
export function channelStateOf(record: ChannelRecord): Record<string, unknown> {
  return {
    channelId: record.channelId,
    balance: record.balance.toString(),
    totalClaimed: record.totalClaimed.toString(),
    withdrawRequestedAt: record.withdrawRequestedAt,
    refundNonce: record.refundNonce.toString(),
    chargedCumulativeAmount: record.chargedCumulative.toString(),
  };
}
