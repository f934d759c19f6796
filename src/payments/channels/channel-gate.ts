// Paid calls under x402 `batch-settlement`: a payer's channel in the escrow backs off-chain cumulative vouchers,
// so a call costs a signature check instead of a transaction. What the gate hands over once it knows the proof
// is a channel payment on a rail that offers channels.
//
// Per request, holding the channel's lock (one request per channel at a time, across instances; a short lease
// kept alive by a heartbeat, so a crashed instance frees it in seconds):
//   the voucher's signature first (nothing of a channel is told to anyone but its payer) -> the voucher last
//   committed, sent again for the same request: its kept result, no new charge (the answer was lost) -> voucher
//   ceiling == charged so far + this call's price, else the corrective 402 (the signed voucher state, so a client
//   that lost its state resynchronises) -> verify (locally from the mirrored escrow state while it is fresh and no
//   withdrawal is pending; else, and for every deposit, by the facilitator), never past what the escrow can still
//   pay -> a deposit is submitted before the work (it is the payer's money in the payer's channel, not a charge)
//   -> work -> on success only, the charge (the quote, or a metered result's cost, never above the quote), the
//   voucher and the result are committed together -> the receipt with extra.chargedAmount and
//   extra.channelState. Failed work leaves the channel as it was.
// A channel the ledger does not know (a lost record) starts from the escrow's totalClaimed, as the spec says.
// Verifications and charges are told to the same PaymentObserver as the gate's (metrics, the call's span).
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import {
  BATCH_SETTLEMENT_SCHEME,
  CHANNEL_BUSY,
  channelPayloadSchema,
  configMismatch,
  CUMULATIVE_BELOW_CLAIMED,
  CUMULATIVE_EXCEEDS_BALANCE,
  CUMULATIVE_MISMATCH,
  INVALID_VOUCHER_SIGNATURE,
  REFUND_AMOUNT_INVALID,
  REFUND_NO_BALANCE,
  REFUND_PAYLOAD,
  stillPayable,
  VOUCHER_ALREADY_USED,
  voucherSignedByAuthorizer,
  ZERO_ADDRESS,
  type ChannelPayload,
  type DepositPayload,
  type RefundPayload,
} from '../../x402/batch-settlement.ts';
import type { EvmNetwork } from '../../x402/networks.ts';
import { newChannelRecord, type ChannelCharge, type ChannelRecord, type ChannelStore } from '../../store/channel-store.ts';
import type { PaymentProof, PaymentRequirement, SettlementReceipt, Wire } from '../../x402/model.ts';
import { FACILITATOR_UNAVAILABLE, PAYER_NOT_ALLOWED, payerAllowed, runWork, type PaidCall, type PaymentOutcome, type Refusal } from '../outcome.ts';
import { NO_PAYMENT_OBSERVER, type PaymentLabels, type PaymentObserver } from '../payment-metrics.ts';
import type { ChannelOffer, PaymentRail } from '../rails.ts';
import type { ChannelProof, ChannelVerifyResult, OnChainChannel } from './channel-facilitator.ts';
import { NO_CHANNEL_OBSERVER, type ChannelObserver } from './channel-metrics.ts';

export interface ChannelGateOptions {
  store: ChannelStore;
  log: Logger;
  /** how long the mirrored escrow state of a channel lets vouchers be verified without the chain */
  freshStateMs?: number;
  /** how long a request waits for a channel another request holds before its 409 */
  lockWaitMs?: number;
  /** how long a channel's lock outlives its holder's last heartbeat (a crashed instance frees it this fast) */
  lockLeaseMs?: number;
  /** told of deposits, charges and refunds (the channel metrics) */
  observe?: ChannelObserver;
  /** told of each verification and charge, as the gate tells of exact and upto payments (the payment metrics, the call's span) */
  payments?: PaymentObserver;
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
/** A lock's lease; its holder renews it every quarter of it while the request runs. */
const DEFAULT_LOCK_LEASE_MS = 5_000;
/** A little over one lease: a request behind a crashed holder still gets the channel. */
const DEFAULT_LOCK_WAIT_MS = 6_000;

const CHANNEL_BUSY_REFUSAL: Refusal = {
  kind: 'refused',
  code: 'payment_in_progress',
  message: `${CHANNEL_BUSY}: another request holds this payment channel; retry shortly`,
  retryAfterSeconds: 1,
};

type PaidPayload = Exclude<ChannelPayload, { type: 'refund' }>;

export class ChannelGate {
  readonly #store: ChannelStore;
  readonly #log: Logger;
  readonly #freshStateMs: number;
  readonly #lockWaitMs: number;
  readonly #lockLeaseMs: number;
  readonly #observe: ChannelObserver;
  readonly #payments: PaymentObserver;
  readonly #holder = `channels-${randomUUID()}`;
  /** requests of this instance queued per channel, so only the head asks the database for the lock */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(options: ChannelGateOptions) {
    this.#store = options.store;
    this.#log = options.log;
    this.#freshStateMs = options.freshStateMs ?? DEFAULT_FRESH_STATE_MS;
    this.#lockWaitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
    this.#lockLeaseMs = options.lockLeaseMs ?? DEFAULT_LOCK_LEASE_MS;
    this.#observe = options.observe ?? NO_CHANNEL_OBSERVER;
    this.#payments = options.payments ?? NO_PAYMENT_OBSERVER;
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

  /**
   * Runs `task` holding the channel: queued behind this instance's requests on it, then the database lock, renewed
   * by a heartbeat while the task runs. Waiting longer than lockWaitMs for either gets the busy refusal.
   */
  async #serialised(channelId: string, task: () => Promise<PaymentOutcome>): Promise<PaymentOutcome> {
    const deadline = Date.now() + this.#lockWaitMs;
    const previous = this.#queues.get(channelId) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = previous.then(() => mine);
    this.#queues.set(channelId, tail);
    try {
      if (!(await settledBy(previous, deadline))) return CHANNEL_BUSY_REFUSAL;
      // one process owns an embedded ledger: its queue above is the whole serialisation
      if (this.#store.singleInstance) return await task();
      if (!(await this.#lock(channelId, deadline))) return CHANNEL_BUSY_REFUSAL;
      const heartbeat = setInterval(() => {
        this.#store
          .lock(channelId, this.#holder, this.#lockLeaseMs)
          .catch((error: unknown) => this.#log.warn({ err: error, channelId }, 'channel lock heartbeat failed'));
      }, this.#lockLeaseMs / 4);
      heartbeat.unref();
      try {
        return await task();
      } finally {
        clearInterval(heartbeat);
        await this.#store.unlock(channelId, this.#holder).catch((error: unknown) => this.#log.warn({ err: error, channelId }, 'channel unlock failed'));
      }
    } finally {
      done();
      if (this.#queues.get(channelId) === tail) this.#queues.delete(channelId);
    }
  }

  /** Takes the channel's lock in the ledger, waiting until `deadline` for another instance's request; false if it did not free. */
  async #lock(channelId: string, deadline: number): Promise<boolean> {
    let wait = 5;
    while (!(await this.#store.lock(channelId, this.#holder, this.#lockLeaseMs))) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 100);
    }
    return true;
  }

  async #pay(input: ChannelCall, payload: PaidPayload, channelId: string): Promise<PaymentOutcome> {
    const { call, rail, requirement } = input;
    const network = rail.network as EvmNetwork;
    const price = requirement.amount;
    const ceiling = BigInt(payload.voucher.maxClaimableAmount);
    const labels: PaymentLabels = { network: network.name, scheme: BATCH_SETTLEMENT_SCHEME, model: call.model };
    // the client's extensions go along: the facilitator submits a Permit2 deposit's EIP-2612 permit from them
    const proof: ChannelProof = { payload, ...(input.proof.extensions ? { extensions: input.proof.extensions } : {}) };
    const eoa = payload.channelConfig.payerAuthorizer !== ZERO_ADDRESS;

    // the payer's signature before anything else: the channel's state and last voucher go to its payer only
    // (an EOA's is a recovery here; a smart wallet's the facilitator checks, below)
    if (eoa && !voucherSignedByAuthorizer(payload.channelConfig, channelId, ceiling, payload.voucher.signature, network.chainId)) {
      return this.#refused(labels, rail, INVALID_VOUCHER_SIGNATURE, payload.channelConfig.payer);
    }

    let record = await this.#store.get(channelId);
    if (record && ceiling === record.signedMaxClaimable && payload.voucher.signature === record.signature) {
      // the voucher committed last (its signature was checked then), sent again: its answer was lost on the way
      // (the client left, a restart); the same request gets the kept result at no further charge
      const kept = await this.#store.chargeAt(channelId, ceiling);
      if (kept?.requestHash === call.requestHash) return delivered(input, record, kept, '');
      return this.#corrective(input, record);
    }
    if (record && ceiling !== record.chargedCumulative + price) {
      if (!eoa && !(await this.#signatureHolds(proof, input))) return this.#refused(labels, rail, INVALID_VOUCHER_SIGNATURE, payload.channelConfig.payer);
      return this.#corrective(input, record);
    }
    // a voucher pays once. Charges below their price (metered calls) leave an earlier voucher's ceiling ahead of
    // what was charged, where a later call's price can meet it; its signature is public once a claim carried it
    if (record && (await this.#store.chargeAt(channelId, ceiling))) return this.#refused(labels, rail, VOUCHER_ALREADY_USED, payload.channelConfig.payer);

    // verification: the mirrored state while fresh and no withdrawal is under way (the signature was recovered
    // above), else the chain, through the facilitator
    const now = Date.now();
    let state: OnChainChannel;
    if (payload.type === 'voucher' && record && eoa && record.withdrawRequestedAt === 0 && now - record.syncedAt < this.#freshStateMs) {
      const invalid = ceiling > record.balance ? CUMULATIVE_EXCEEDS_BALANCE : ceiling <= record.totalClaimed ? CUMULATIVE_BELOW_CLAIMED : undefined;
      await this.#payments.verify(labels, Promise.resolve(invalid ? { isValid: false, invalidReason: invalid } : { isValid: true, payer: payload.channelConfig.payer }));
      if (invalid) return paymentRequired(rail, invalid);
      state = record;
    } else {
      const verified = await this.#verify(labels, proof, input);
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

    if (!payerAllowed(call, payload.channelConfig.payer)) return PAYER_NOT_ALLOWED;

    // a withdrawal under way pays out what is not claimed once its delay is over: a voucher is backed only by what stays
    if (state.withdrawRequestedAt !== 0) {
      const payable = stillPayable(state) + (payload.type === 'deposit' ? BigInt(payload.deposit.amount) : 0n);
      if (ceiling > payable) return paymentRequired(rail, `${CUMULATIVE_EXCEEDS_BALANCE}: a withdrawal is pending on this channel; the escrow can still pay ${payable}`);
    }

    // a deposit lands before the work: the voucher it carries is backed only once it has
    let deposit: { transaction: string; amount: bigint } | undefined;
    if (payload.type === 'deposit') {
      const landed = await this.#deposit(labels, input, { ...proof, payload }, channelId, state);
      if ('kind' in landed) return landed;
      ({ deposit, state } = landed);
    }

    const result = await runWork(call, { payer: payload.channelConfig.payer, ...(call.metered ? {} : { charge: price }) });
    const charged = call.metered && result.cost !== undefined && result.cost < price ? result.cost : price;
    const base = ceiling - price;
    const charge: ChannelCharge = {
      channelId,
      cumulative: ceiling,
      network: network.name,
      payer: payload.channelConfig.payer,
      model: call.model,
      amount: charged,
      requestHash: call.requestHash,
      result: { status: 200, body: result.body, media: result.media },
      createdAt: Date.now(),
    };
    // the charge, the voucher and the result in one write, and only onto the state this call was checked against
    let moved = false;
    const committing = this.#store.commit(
      channelId,
      (current) => {
        if (!current || current.chargedCumulative !== base) {
          moved = true;
          return undefined;
        }
        const at = Date.now();
        return { ...current, chargedCumulative: base + charged, signedMaxClaimable: ceiling, signature: payload.voucher.signature, lastRequestAt: at, updatedAt: at };
      },
      charge,
    );
    const payer = payload.channelConfig.payer;
    const committed = await this.#payments.settle(
      labels,
      charged,
      committing.then(() => (moved ? { status: 'failed' as const, reason: CHANNEL_BUSY, payer } : { status: 'settled' as const, transaction: deposit?.transaction ?? '', payer })),
    );
    // another request moved the channel meanwhile (a lock lost to a database outage): this one charges nothing
    if (committed.status !== 'settled') return CHANNEL_BUSY_REFUSAL;
    this.#observe.charged(network.name, call.model, charged);
    return delivered(input, (await committing)!, charge, deposit ? deposit.amount.toString() : '', deposit?.transaction);
  }

  /** Submits a deposit and mirrors the channel after it; a deposit that did not land is the outcome. */
  async #deposit(
    labels: PaymentLabels,
    input: ChannelCall,
    proof: ChannelProof<DepositPayload>,
    channelId: string,
    before: OnChainChannel,
  ): Promise<{ deposit: { transaction: string; amount: bigint }; state: OnChainChannel } | PaymentOutcome> {
    const { rail, requirement } = input;
    const { payload } = proof;
    const payer = payload.channelConfig.payer;
    const settled = await rail.channels.facilitator.settle(proof, requirement).catch((error: unknown) => {
      this.#log.error({ err: error, channelId }, 'channel deposit failed to be submitted; it may still land');
      return undefined;
    });
    if (!settled?.success) {
      const failure = settled && !settled.pending ? { status: 'failed' as const, reason: settled.errorReason, payer } : { status: 'unknown' as const, reason: 'deposit not confirmed', payer, transaction: settled?.transaction ?? '' };
      await this.#payments.settle(labels, requirement.amount, Promise.resolve(failure));
      if (!settled) return FACILITATOR_UNAVAILABLE;
      // the deposit may still land: the client retries the same payment, which then finds it on chain
      if (settled.pending) return { kind: 'pending', transaction: settled.transaction || null };
      return paymentRequired(rail, `settlement_failed: ${settled.errorReason}`);
    }
    const amount = BigInt(payload.deposit.amount);
    const state: OnChainChannel = settled.state ?? { ...before, balance: before.balance + amount };
    const record = await this.#store.update(channelId, (current) => current && { ...current, ...mirrored(state, Date.now()), deposited: current.deposited + amount });
    if (!record) throw new Error('channel record vanished');
    this.#observe.deposited(rail.network.name, amount);
    this.#log.info({ channelId, network: rail.network.name, tx: settled.transaction, amount: amount.toString() }, 'channel deposit settled');
    return { deposit: { transaction: settled.transaction, amount }, state };
  }

  /** The facilitator's verification, told to the payment observer; undefined when the facilitator could not be asked. */
  async #verify(labels: PaymentLabels, proof: ChannelProof, input: ChannelCall): Promise<ChannelVerifyResult | undefined> {
    const verifying = input.rail.channels.facilitator.verify(proof, input.requirement);
    try {
      await this.#payments.verify(labels, verifying);
      return await verifying;
    } catch (error) {
      this.#log.error({ err: error, channelId: proof.payload.voucher.channelId }, 'channel verify failed');
      return undefined;
    }
  }

  /** A smart wallet's voucher (no EOA authorizer): whether the facilitator finds its signature valid, whatever else it finds. */
  async #signatureHolds(proof: ChannelProof, input: ChannelCall): Promise<boolean> {
    const verified = await input.rail.channels.facilitator.verify(proof, input.requirement).catch(() => undefined);
    return verified !== undefined && (verified.isValid || verified.invalidReason !== INVALID_VOUCHER_SIGNATURE);
  }

  /** A voucher refused before any state is read, told to the observer as an invalid verification. */
  async #refused(labels: PaymentLabels, rail: PaymentRail, reason: string, payer: string): Promise<PaymentOutcome> {
    await this.#payments.verify(labels, Promise.resolve({ isValid: false, invalidReason: reason, payer }));
    return paymentRequired(rail, reason);
  }

  /**
   * A cooperative refund (no work runs): the zero-charge voucher must sign exactly what was charged; the
   * facilitator claims that (the refund voucher is a voucher for it) and returns what is left, or the requested
   * part of it, to the payer in one transaction. The claimed part is settled by the claimer. Each voucher asks for
   * one refund: a replay (the same voucher and amount) gets that refund's answer and is never submitted again.
   */
  async #refund(input: ChannelCall, payload: RefundPayload, channelId: string): Promise<PaymentOutcome> {
    const { rail, requirement } = input;
    const facilitator = rail.channels.facilitator;
    const network = rail.network as EvmNetwork;
    const signed = BigInt(payload.voucher.maxClaimableAmount);
    // the facilitator checks the voucher's signature: nothing below is told to anyone but the payer
    const verified = await facilitator.verify({ payload }, requirement).catch((error: unknown) => {
      this.#log.error({ err: error, channelId }, 'channel refund verify failed');
      return undefined;
    });
    if (!verified) return FACILITATOR_UNAVAILABLE;
    if (!verified.isValid) return paymentRequired(rail, verified.invalidReason);
    const state = verified.state;
    const now = Date.now();
    let record = await this.#store.update(channelId, (current) =>
      current
        ? { ...current, ...mirrored(state, now) }
        : { ...newChannelRecord(channelId, network.name, payload.channelConfig, now), chargedCumulative: state.totalClaimed, ...mirrored(state, now) },
    );
    if (!record) throw new Error('channel record not written');
    if (signed !== record.chargedCumulative) return this.#corrective(input, record);

    const asked = payload.amount ?? '';
    if (record.refundVoucher === payload.voucher.signature) {
      // this voucher asked for a refund already
      if (record.refundAmount === '') return { kind: 'pending', transaction: record.lastRefundTx || null };
      if (record.refundAsked === asked) return refunded(input, record, BigInt(record.refundAmount), record.lastRefundTx);
      return paymentRequired(
        rail,
        `${REFUND_PAYLOAD}: this voucher was used for a refund already (transaction ${record.lastRefundTx}); a further refund needs the voucher of a later charge`,
      );
    }

    const claimedAfter = record.chargedCumulative > state.totalClaimed ? record.chargedCumulative : state.totalClaimed;
    const refundable = state.balance > claimedAfter ? state.balance - claimedAfter : 0n;
    if (refundable === 0n) return paymentRequired(rail, REFUND_NO_BALANCE);
    const requested = payload.amount === undefined ? refundable : BigInt(payload.amount);
    if (requested === 0n) return paymentRequired(rail, REFUND_AMOUNT_INVALID);
    const amount = requested < refundable ? requested : refundable;
    const claims =
      record.chargedCumulative > state.totalClaimed
        ? [{ voucher: { channel: payload.channelConfig, maxClaimableAmount: signed.toString() }, signature: payload.voucher.signature, totalClaimed: record.chargedCumulative.toString() }]
        : [];
    // the voucher is spent before the refund is submitted: a replay meanwhile (or after a crash) is never sent again
    record = await this.#store.update(channelId, (current) => current && { ...current, refundVoucher: payload.voucher.signature, refundAsked: asked, refundAmount: '', lastRefundTx: '' });
    if (!record) throw new Error('channel record vanished');
    const submission = { ...payload, amount: amount.toString(), refundNonce: state.refundNonce.toString(), claims };
    const settled = await facilitator.settle({ payload: submission }, requirement).catch((error: unknown) => {
      this.#log.error({ err: error, channelId }, 'channel refund failed to be submitted; it may still land');
      return { success: false as const, errorReason: 'refund outcome unknown', transaction: '', pending: true };
    });
    if (!settled.success) {
      const { transaction } = settled;
      // certainly not sent: the voucher may ask again; maybe sent: it stays spent, and the payer's retry hears so
      await this.#store.update(channelId, (current) => current && (settled.pending ? { ...current, lastRefundTx: transaction } : { ...current, refundVoucher: '' }));
      if (settled.pending) return { kind: 'pending', transaction: transaction || null };
      return paymentRequired(rail, `settlement_failed: ${settled.errorReason}`);
    }
    const returned = settled.amount ?? amount;
    const after = await this.#store.update(channelId, (current) =>
      current && {
        ...current,
        ...(settled.state ? mirrored(settled.state, Date.now()) : { balance: current.balance - returned, refundNonce: current.refundNonce + 1n }),
        totalClaimed: claimedAfter,
        refunded: current.refunded + returned,
        refundAmount: returned.toString(),
        lastRefundTx: settled.transaction,
        updatedAt: Date.now(),
      },
    );
    if (!after) throw new Error('channel record vanished');
    this.#observe.refunded(network.name, returned);
    if (claims.length > 0) this.#observe.claimed(network.name, record.chargedCumulative - state.totalClaimed);
    this.#log.info({ channelId, network: network.name, tx: settled.transaction, amount: returned.toString() }, 'channel refunded');
    return refunded(input, after, returned, settled.transaction);
  }

  /**
   * The corrective 402: the batch-settlement offer carries the channel as this server has it and the payer's
   * latest signed voucher, which the official client verifies before adopting the charged amount. Only ever given
   * once the voucher's signature is known to be the payer's.
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

/** Whether `promise` settles by `deadline` (ms since the epoch). */
async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A refusal that offers the rail again with `reason`. */
function paymentRequired(rail: PaymentRail, reason: string): PaymentOutcome {
  return { kind: 'payment_required', reason, rails: [rail] };
}

/**
 * A paid call's answer: the charge's result and its receipt. The receipt's own `amount` is the scheme's (the
 * deposit's, '' for a charge alone), the charge being in `extra.chargedAmount`, as the official scheme answers.
 */
function delivered(input: ChannelCall, record: ChannelRecord, charge: ChannelCharge, schemeAmount: string, transaction = ''): PaymentOutcome {
  const receipt: SettlementReceipt = {
    success: true,
    transaction,
    network: input.rail.network.name,
    payer: record.config.payer,
    amount: charge.amount,
    schemeAmount,
    extra: { chargedAmount: charge.amount.toString(), channelState: channelStateOf(record) },
  };
  const { status, body, media } = charge.result;
  return { kind: 'delivered', status, body, media, wires: input.wires, receipt };
}

/** A refund's answer: its transaction, and the amount it returned as the receipt's own amount (nothing is charged). */
function refunded(input: ChannelCall, record: ChannelRecord, returned: bigint, transaction: string): PaymentOutcome {
  const channelState = channelStateOf(record);
  return {
    kind: 'delivered',
    status: 200,
    body: { channelId: record.channelId, refunded: returned.toString(), transaction, channelState },
    media: [],
    wires: input.wires,
    receipt: { success: true, transaction, network: input.rail.network.name, payer: record.config.payer, amount: 0n, schemeAmount: returned.toString(), extra: { channelState } },
  };
}

function mirrored(state: OnChainChannel, now: number): Pick<ChannelRecord, 'balance' | 'totalClaimed' | 'withdrawRequestedAt' | 'refundNonce' | 'syncedAt' | 'updatedAt'> {
  return { balance: state.balance, totalClaimed: state.totalClaimed, withdrawRequestedAt: state.withdrawRequestedAt, refundNonce: state.refundNonce, syncedAt: now, updatedAt: now };
}

/** The scheme's channel snapshot (amounts as decimal strings). */
function channelStateOf(record: ChannelRecord): Record<string, unknown> {
  return {
    channelId: record.channelId,
    balance: record.balance.toString(),
    totalClaimed: record.totalClaimed.toString(),
    withdrawRequestedAt: record.withdrawRequestedAt,
    refundNonce: record.refundNonce.toString(),
    chargedCumulativeAmount: record.chargedCumulative.toString(),
  };
}
