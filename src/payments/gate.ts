// The payment core: quote -> payment required, or match -> reserve -> verify -> work -> settle -> delivered.
// It owns every money decision of a call and speaks only the internal model: a wire edge reads the proof in
// (src/http/paid/payment-edge.ts for HTTP headers, src/http/mcp/ for JSON-RPC `_meta`) and renders the outcome out.
//
// Invariants:
// - one payment key is reserved once, atomically, before verification; the work runs at most once per key;
// - nothing is settled unless the work (and its media) completed; a failed work releases the reservation;
// - a settlement whose outcome is unknown stays 'pending' and is reconciled; the client retries the same proof;
// - a streamed answer never outlives the payment's ability to settle (stream-validity.ts).
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { resolveNetworkName, type NetworkName } from '../x402/networks.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import { errorSummary } from '../lib/log-safety.ts';
import { ApiError } from '../errors.ts';
import { LedgerUnavailableError, UNBOUNDED_ATTEMPTS, type Ledger, type PaymentRecord, type PaymentState, type PaymentUpdate, type StoredResult } from '../store/ledger.ts';
import { SETTLEMENT_DEFERRED } from './reasons.ts';
import { OutcomeRecorder } from './outcome-recorder.ts';
import type { MediaStore } from '../media/media-store.ts';
import { facilitatorFor, offerOf, SCHEMES_BESIDE_EXACT, type PaymentRail, type PaymentRails } from './rails.ts';
import { acceptedMismatch, storedProof, storedRequirement, type PaymentProof, type PaymentRequired, type PaymentRequirement, type SettlementReceipt, type Wire } from '../x402/model.ts';
import { SchemeRegistry } from './schemes/registry.ts';
import type { PaymentScheme, ProofIdentity } from './schemes/scheme.ts';
import { isAcceptedProof, withinValidity } from './replay.ts';
import { streamPlan } from './stream-validity.ts';
import { NO_PAYMENT_OBSERVER, type PaymentLabels, type PaymentObserver } from './payment-metrics.ts';
import { FACILITATOR_UNAVAILABLE, PAYER_NOT_ALLOWED, payerAllowed, runWork, type PaidCall, type PaymentOutcome, type ReceivedPayment, type Refusal, type SchemeName, type WorkResult } from './outcome.ts';
import { ChannelGate } from './channels/channel-gate.ts';
import type { ChannelObserver } from './channels/channel-metrics.ts';
import { BATCH_SETTLEMENT_SCHEME } from '../x402/batch-settlement.ts';

export type { PaidCall, PaymentOutcome, ReceivedPayment, WorkPayment, WorkResult } from './outcome.ts';

export interface GateDeps {
  rails: PaymentRails;
  ledger: Ledger;
  media: MediaStore;
  log: Logger;
  /** told of each verification and settlement (the payment metrics) */
  observe?: PaymentObserver;
  /** the schemes accepted, by (scheme, chain family); exact on EVM and Solana by default */
  schemes?: SchemeRegistry;
  /** how often one payment's work may fail (config.maxFailedAttempts); unbounded when absent */
  maxFailedAttempts?: FailedAttemptLimits;
  /** told of payment channels' deposits, charges and refunds (the channel metrics) */
  observeChannels?: ChannelObserver;
  /**
   * whether a network is offered in the 402 now: false while its last readiness check found that payments there
   * would fail (payments/readiness.ts). Every network is offered when absent.
   */
  offered?: (network: NetworkName) => boolean;
}

/** How many times the paid work of one payment may fail before its proof is refused (see config.maxFailedAttempts). */
export interface FailedAttemptLimits {
  /** settled after the work: the proof was released each time, nothing was charged */
  unsettled: number;
  /** settled before the work (settle-first): each retry reran paid-for work */
  settled: number;
}

/** the reason a payment whose work failed too often is refused, in the answer and in the ledger */
export const ATTEMPTS_EXHAUSTED = 'payment_attempts_exhausted';

/** Settling could not be attempted (its chain or the payments database unreachable) before anything was delivered. */
const SETTLEMENT_UNAVAILABLE: Refusal = {
  ...FACILITATOR_UNAVAILABLE,
  message: 'the payment could not be settled right now (its chain or the payments database cannot be reached); nothing was charged: retry shortly with the same payment',
};

const IN_PROGRESS: Refusal = {
  kind: 'refused',
  code: 'payment_in_progress',
  message: 'this payment is already being processed; retry shortly with the same proof',
  retryAfterSeconds: 1,
};

/** What of a call its offers depend on. */
type OfferedCall = Pick<PaidCall, 'amount' | 'maxTimeoutSeconds' | 'resource' | 'description' | 'schemes'>;

/** A payment matched to a rail, a scheme and the server's own requirement for this call. */
interface Matched {
  call: PaidCall;
  rail: PaymentRail;
  scheme: PaymentScheme;
  requirement: PaymentRequirement;
  proof: PaymentProof;
  received: ReceivedPayment;
  /** the payment key this call reserved, once it has (see releaseAfterLedgerFailure) */
  reservedKey?: string;
}

export class PaymentGate {
  private readonly deps: GateDeps;
  private readonly schemes: SchemeRegistry;
  private readonly attempts: FailedAttemptLimits;
  /** settled payments whose work is running in this instance (settle-first) */
  private readonly working = new Set<string>();
  /** payment channels (x402 batch-settlement), where the ledger keeps them */
  private readonly channels: ChannelGate | undefined;

  /**
   * Every rail, for a call that names no network: EVM networks first. x402-fetch 1.x with a viem account
   * (no chain) pays the first USDC requirement offered whatever its network, while a Solana signer filters
   * to its own networks anyway; so EVM-first lets both pay without naming a network.
   */
  readonly anyNetworkRails: readonly PaymentRail[];

  /** the networks of the rails, fixed once the gate is made (as anyNetworkRails is) */
  readonly enabledNetworks: readonly NetworkName[];

  constructor(deps: GateDeps) {
    this.deps = deps;
    this.schemes = deps.schemes ?? new SchemeRegistry();
    this.attempts = deps.maxFailedAttempts ?? { unsettled: UNBOUNDED_ATTEMPTS, settled: UNBOUNDED_ATTEMPTS };
    this.enabledNetworks = [...deps.rails.keys()];
    this.anyNetworkRails = [...deps.rails.values()].sort((a, b) => Number(a.network.family === 'svm') - Number(b.network.family === 'svm'));
    this.channels = deps.ledger.channels
      ? new ChannelGate({
          store: deps.ledger.channels,
          log: deps.log,
          ...(deps.observeChannels ? { observe: deps.observeChannels } : {}),
          ...(deps.observe ? { payments: deps.observe } : {}),
        })
      : undefined;
  }

  /** The server's own requirement for this call on this rail (every rail offers `exact`). */
  requirementFor(rail: PaymentRail, call: Pick<PaidCall, 'amount' | 'maxTimeoutSeconds' | 'resource' | 'description'>, scheme = 'exact'): PaymentRequirement {
    return {
      scheme,
      network: rail.network.name,
      amount: call.amount,
      payTo: rail.payTo,
      asset: rail.asset,
      maxTimeoutSeconds: call.maxTimeoutSeconds,
      extra: { ...rail.extra, ...offerOf(rail, scheme)?.extra },
      resource: { url: call.resource, description: call.description },
    };
  }

  /**
   * What a payment-required answer offers on these rails, in order: each rail's `exact`, and beside it each other
   * scheme the operation takes that the rail has (`upto`, payment channels, `auth-capture`), whether or not the
   * call named its network (a client that names none is offered the same schemes). Also the v2 `extensions` those
   * offers declare.
   */
  offers(call: OfferedCall, rails: readonly PaymentRail[]): { requirements: PaymentRequirement[]; extensions: Record<string, unknown> } {
    const requirements: PaymentRequirement[] = [];
    const extensions: Record<string, unknown> = {};
    for (const rail of rails) {
      requirements.push(this.requirementFor(rail, call));
      for (const { scheme } of SCHEMES_BESIDE_EXACT) {
        const offer = this.offeredScheme(rail, call, scheme);
        if (!offer) continue;
        requirements.push(this.requirementFor(rail, call, scheme));
        Object.assign(extensions, offer.extensions);
      }
    }
    return { requirements, extensions };
  }

  /**
   * The one payment-required answer of every transport: the outcome's reason and rails as the offers of this call,
   * its amendment (a channel's state for its payer) applied, and what the operation declares beside them.
   */
  paymentRequired(call: OfferedCall & Pick<PaidCall, 'listing'>, outcome: Extract<PaymentOutcome, { kind: 'payment_required' }>): PaymentRequired {
    const offers = this.offers(call, outcome.rails);
    const { amend } = outcome;
    const accepts = amend
      ? offers.requirements.map((requirement) =>
          requirement.scheme === amend.scheme && requirement.network === amend.network ? { ...requirement, extra: { ...requirement.extra, ...amend.extra } } : requirement,
        )
      : offers.requirements;
    const { serviceName, tags, extensions } = call.listing;
    return {
      reason: outcome.reason,
      resource: {
        url: call.resource,
        description: call.description,
        mimeType: 'application/json',
        ...(serviceName ? { serviceName } : {}),
        ...(tags?.length ? { tags } : {}),
      },
      accepts,
      extensions: { ...offers.extensions, ...extensions },
    };
  }

  /**
   * The rail's offer of a scheme beside `exact`, if this call is offered it: for operations that take the scheme,
   * on rails that have it; payment channels also need a ledger that keeps them.
   */
  private offeredScheme(rail: PaymentRail, call: Pick<PaidCall, 'schemes'>, scheme: SchemeName) {
    if (!call.schemes.includes(scheme) || (scheme === BATCH_SETTLEMENT_SCHEME && this.channels === undefined)) return undefined;
    return offerOf(rail, scheme);
  }

  /**
   * The networks an unpaid call naming `network` is offered now, as one string (empty when none can be paid): what
   * its 402 depends on beside the call itself, so a kept 402 is not replayed once it changes (http/paid/unpaid-quotes.ts).
   */
  offerState(network: string | undefined): string {
    const { offered } = this.railsAsked(network);
    return 'kind' in offered ? '' : offered.map((rail) => rail.network.name).join(',');
  }

  /** The network a call asks for, its rail, and the rails it is offered now (only those that can be paid: offeredOf). */
  private railsAsked(network: string | undefined) {
    const requested = network?.trim() || undefined;
    const namedRail = requested ? this.railFor(requested) : undefined;
    return { requested, namedRail, offered: this.offeredOf(namedRail ? [namedRail] : this.anyNetworkRails) };
  }

  async process(call: PaidCall): Promise<PaymentOutcome> {
    const { requested, namedRail, offered: fallbackRails } = this.railsAsked(call.network);

    if (call.payment === undefined) {
      if ('kind' in fallbackRails) return fallbackRails;
      if (namedRail) return required(call.names.noPayment, fallbackRails);
      // quoted short: the longest network name is 39 characters, and the reason travels in a response header
      const why = requested ? `${JSON.stringify(requested.length > 48 ? `${requested.slice(0, 48)}…` : requested)} is not a supported ${call.names.network}` : call.names.noNetwork;
      return required(`${call.names.noPayment}; ${why} (supported: ${this.enabledNetworks.join(', ')})`, fallbackRails);
    }
    const received = call.payment;
    if (typeof received === 'string') return 'kind' in fallbackRails ? fallbackRails : required(received, fallbackRails);

    // The network is the one the proof names; the network the call asked for, when it did, must agree with it.
    if (requested && !namedRail) return this.unsupportedNetwork(requested, call.names.network, 'network');
    const rail = this.railFor(received.proof.network);
    if (!rail) return this.unsupportedNetwork(received.proof.network, `${received.source} network`, 'payment');
    const proof: PaymentProof = { ...received.proof, network: rail.network.name };
    if (namedRail && namedRail !== rail) {
      return {
        kind: 'refused',
        code: 'network_mismatch',
        subject: 'network',
        message: `${call.names.network} is ${namedRail.network.name} but the payment is for ${rail.network.name}`,
      };
    }
    const channels = proof.scheme === BATCH_SETTLEMENT_SCHEME && this.offeredScheme(rail, call, BATCH_SETTLEMENT_SCHEME) !== undefined;
    if (call.refundOnly && !channels) {
      return required(`invalid_payment: only a ${BATCH_SETTLEMENT_SCHEME} refund is taken here; a paid call is a POST`, [rail]);
    }
    if (channels && rail.channels && this.channels) {
      // a payment channel: per-channel state instead of one-use keys (payments/channels/channel-gate.ts)
      const requirement = this.requirementFor(rail, call, BATCH_SETTLEMENT_SCHEME);
      const mismatch = received.accepted && acceptedMismatch(received.accepted, requirement);
      if (mismatch) return required(mismatch, [rail]);
      return this.channels.handle({ call, rail: { ...rail, channels: rail.channels }, requirement, proof, wires: received.wires });
    }
    const scheme = this.schemes.get(proof.scheme, rail.network.family);
    if (!scheme || !call.schemes.includes(proof.scheme as SchemeName) || !facilitatorFor(rail, proof.scheme)) {
      const accepted = this.schemes.names(rail.network.family).map((name) => `"${name}"`).join(', ');
      return required(`unsupported_scheme: ${proof.scheme} (accepted on ${rail.network.name}: ${accepted})`, [rail]);
    }
    const requirement = this.requirementFor(rail, call, proof.scheme);
    // A v2 proof names the requirement it accepted: it must be this server's own, for this call.
    const mismatch = received.accepted && acceptedMismatch(received.accepted, requirement);
    if (mismatch) return required(mismatch, [rail]);
    const matched: Matched = { call, rail, scheme, requirement, proof, received };
    return this.settlePaidCall(matched).catch((error: unknown) => this.releaseAfterLedgerFailure(matched, error));
  }

  /**
   * The rails of `rails` that can be paid now: a network whose last readiness check found that payments there
   * would fail is not offered (a payer would sign for nothing). None left: refused, 503, nothing charged.
   */
  private offeredOf(rails: readonly PaymentRail[]): readonly PaymentRail[] | Refusal {
    const offered = this.deps.offered;
    if (!offered) return rails;
    const ready = rails.filter((rail) => offered(rail.network.name));
    if (ready.length > 0) return ready;
    return {
      kind: 'refused',
      code: 'facilitator_unavailable',
      message: `payments on ${rails.map((rail) => rail.network.name).join(', ')} cannot be taken right now (see /readyz); nothing was charged, retry later`,
      retryAfterSeconds: 30,
    };
  }

  private railFor(network: string): PaymentRail | undefined {
    const name = resolveNetworkName(network);
    return name && this.deps.rails.get(name);
  }

  private unsupportedNetwork(network: string, where: string, subject: 'network' | 'payment'): Refusal {
    return {
      kind: 'refused',
      code: 'unsupported_network',
      subject,
      message: `${where} "${network}" is not supported; supported values: ${this.enabledNetworks.join(', ')}`,
    };
  }

  private async settlePaidCall(matched: Matched): Promise<PaymentOutcome> {
    const { call, rail, scheme, requirement, proof } = matched;
    const { ledger, log } = this.deps;
    const identity = scheme.identify(rail.network, requirement, proof);
    if (typeof identity === 'string') return required(identity, [rail]);
    const { key } = identity;
    if (identity.mismatch) {
      // A proof already used elsewhere is reported as such, whatever else is wrong with it here.
      const existing = await ledger.get(key);
      if (existing && existing.state !== 'released' && existing.state !== 'failed') return this.alreadyUsed(matched, existing, identity.mismatch);
      return required(identity.mismatch, [rail]);
    }

    const reservation = await ledger.reserve(
      {
        key,
        network: rail.network.name,
        payer: identity.payer,
        amount: requirement.amount.toString(),
        asset: rail.asset,
        payTo: rail.payTo,
        resource: call.resource,
        model: call.model,
        requestHash: call.requestHash,
        payload: storedProof(proof),
        requirements: storedRequirement(requirement),
      },
      this.attempts.unsettled,
    );
    if (!reservation.reserved) return this.alreadyUsed(matched, reservation.existing);
    matched.reservedKey = key;

    const observe = this.deps.observe ?? NO_PAYMENT_OBSERVER;
    const labels = { network: rail.network.name, scheme: requirement.scheme, model: call.model };
    const facilitator = facilitatorFor(rail, requirement.scheme)!;
    const verification = await observe.verify(labels, facilitator.verify(proof, requirement)).catch((error: unknown) => {
      log.error({ err: error, key }, 'facilitator verify failed');
      return undefined;
    });
    if (!verification?.isValid) {
      const reason = verification ? verification.invalidReason : 'facilitator_unavailable';
      await ledger.transition(key, ['reserved'], { state: 'released', error: reason });
      return verification ? required(reason, [rail]) : FACILITATOR_UNAVAILABLE;
    }
    const payer = verification.payer;
    if (!payerAllowed(call, payer)) {
      await ledger.transition(key, ['reserved'], { state: 'released', error: PAYER_NOT_ALLOWED.code });
      return PAYER_NOT_ALLOWED;
    }
    // payment-identifier: bound only to a payment that verified, so nobody can take another payer's id with junk
    const idConflict = matched.received.paymentId === undefined ? undefined : await this.bindPaymentId(matched.received.paymentId, proof, key);
    if (idConflict) {
      await ledger.transition(key, ['reserved'], { state: 'released', error: idConflict.code });
      return idConflict;
    }
    await ledger.transition(key, ['reserved'], { state: 'verified', payer });

    const plan = streamPlan(call.streamSeconds, requirement.scheme, identity);
    if (plan.kind === 'refuse') {
      await ledger.transition(key, ['verified'], { state: 'released', error: 'payment_expires_too_soon' });
      return required(plan.reason, [rail]);
    }
    // upto settles the cost of the result, so it always works first
    if (requirement.scheme !== 'upto' && (plan.kind === 'settle_first' || call.settleFirst(rail.network.name))) {
      return this.settleThenWork(matched, key, payer, labels);
    }

    let result: WorkResult;
    try {
      result = await runWork(call, requirement.scheme === 'upto' ? { payer, ...(plan.kind === 'deadline' ? { deadline: plan.at } : {}) } : { payer, charge: requirement.amount });
    } catch (error) {
      // released, so the same proof may try again, but only so often (reserve refuses it past the bound)
      await ledger.transition(key, ['verified'], { state: 'released', error: errorSummary(error), countFailure: true });
      throw error;
    }

    // What is charged: the price, or (upto) the result's cost, never above the ceiling the payer authorized.
    const charged = requirement.scheme === 'upto' && result.cost !== undefined && result.cost < requirement.amount ? result.cost : requirement.amount;
    // The result is recorded before settlement starts, so it is never lost whatever settlement does.
    const stored: StoredResult = { status: 200, body: result.body, media: result.media };
    const pending: PaymentUpdate = { state: 'pending', result: stored, settledAmount: charged.toString() };
    // A stream's answer is with its client already: an outage from here on defers its settlement, never gives it away.
    const streamed = call.streamSeconds !== undefined;
    const recorded = await ledger.transition(key, ['verified'], pending).catch((error: unknown) => {
      if (streamed && error instanceof LedgerUnavailableError) return undefined;
      throw error;
    });
    if (recorded === undefined) return this.deferSettlement(key, ['verified'], pending, 'ledger_unavailable');

    const outcome = await observe.settle(labels, charged, facilitator.settle(proof, requirement, charged)).catch((error: unknown) => {
      log.error({ err: error, key }, 'settlement threw; outcome unknown');
      return { status: 'unknown' as const, reason: errorSummary(error), payer, transaction: '' };
    });
    if (streamed && (outcome.status === 'unavailable' || (outcome.status === 'unknown' && !outcome.transaction))) {
      return this.deferSettlement(key, ['pending'], { state: 'pending' }, outcome.reason);
    }
    if (outcome.status === 'unavailable') {
      // nothing was sent and the result is not out yet: nothing is charged, and the same proof may come again
      await this.recordAfterSettlement(key, { state: 'released', error: outcome.reason, result: null });
      await this.discardMedia(result.media);
      log.warn({ key, reason: outcome.reason }, 'settlement unavailable; released, nothing charged');
      return SETTLEMENT_UNAVAILABLE;
    }
    if (outcome.status === 'settled') {
      // an upto cost of 0 moves nothing: no transaction
      if ((await this.recordAfterSettlement(key, { state: 'settled', txHash: outcome.transaction || null })) === undefined) {
        // paid, but the ledger cannot say so yet: the result waits in the pending row until reconciliation
        // confirms the payment, and the same proof then gets it
        return { kind: 'pending', transaction: outcome.transaction || null };
      }
      log.info({ key, network: rail.network.name, tx: outcome.transaction, amount: charged.toString() }, 'payment settled');
      return delivered(stored, rail, outcome.transaction, outcome.payer || payer, matched.received.wires, charged);
    }
    if (outcome.status === 'failed') {
      // unrecorded, the row stays pending until reconciliation finds the authorization unused and expired
      await this.recordAfterSettlement(key, { state: 'failed', error: outcome.reason, result: null });
      await this.discardMedia(result.media);
      log.warn({ key, reason: outcome.reason }, 'settlement failed; result withheld');
      return settlementFailed(rail, matched.received.wires, outcome.reason, outcome.transaction ?? '', outcome.payer ?? payer);
    }
    await this.recordAfterSettlement(key, { state: 'pending', txHash: outcome.transaction || null, error: outcome.reason });
    log.warn({ key, tx: outcome.transaction, reason: outcome.reason }, 'settlement outcome unknown; will reconcile');
    return { kind: 'pending', transaction: outcome.transaction || null };
  }

  /**
   * Records what a settlement did to a pending payment. Past this point money may have moved, so a ledger that
   * cannot be written (its database restarting) must not turn the answer into an error that says nothing was
   * charged: the write is retried (outcome-recorder.ts) and the row stays 'pending' meanwhile. Undefined when
   * not recorded in time for this answer; false when reconciliation moved the row first (as before).
   */
  private recordAfterSettlement(key: string, update: PaymentUpdate): Promise<boolean | undefined> {
    this.recorder ??= new OutcomeRecorder(this.deps.log);
    return this.recorder.record(key, () => this.deps.ledger.transition(key, ['pending'], update), 'a settlement outcome');
  }

  private recorder: OutcomeRecorder | undefined;

  /**
   * A delivered stream's payment that cannot be settled now (its chain, or the ledger its nonces or its row
   * need, is unreachable). Its authorization still stands: the row is left pending, marked SETTLEMENT_DEFERRED,
   * and the reconciler settles it once they are back (written in the background while the ledger is away).
   */
  private deferSettlement(key: string, from: PaymentState[], update: PaymentUpdate, reason: string): PaymentOutcome {
    this.recorder ??= new OutcomeRecorder(this.deps.log);
    const deferred: PaymentUpdate = { ...update, state: 'pending', error: `${SETTLEMENT_DEFERRED}: ${reason}` };
    void this.recorder.record(key, () => this.deps.ledger.transition(key, from, deferred), 'a deferred settlement');
    this.deps.log.warn({ key, reason }, 'settlement deferred: the stream was delivered; the reconciler settles it');
    return { kind: 'pending', transaction: null };
  }

  /**
   * The ledger's database went away after this call reserved its payment and before any settlement (a failure
   * past that point is recorded, never thrown: recordAfterSettlement). Nothing moved, and the client is told so
   * (503, retry): the reservation is released once the database is back, in the background, so the same proof
   * can be used again at once rather than after its lease runs out under this instance's heartbeat.
   */
  private releaseAfterLedgerFailure(matched: Matched, error: unknown): never {
    const key = matched.reservedKey;
    if (key !== undefined && error instanceof LedgerUnavailableError) {
      this.recorder ??= new OutcomeRecorder(this.deps.log);
      const release = () => this.deps.ledger.transition(key, ['reserved', 'verified'], { state: 'released', error: 'ledger_unavailable' });
      void this.recorder.record(key, release, 'the release of a reservation');
    }
    throw error;
  }

  /**
   * payment-identifier: the id is bound, in the ledger, to the verified payment it came with, whichever instance
   * sees it, for as long as that payment stands: one released or failed (nothing charged) frees it. The same id
   * with the same payment goes on to the payment's own one-use key (its stored result, or 409 while it runs);
   * with another payment that stands it is refused.
   */
  private async bindPaymentId(id: string, proof: PaymentProof, key: string): Promise<Refusal | undefined> {
    const payment = createHash('sha256').update(`${proof.scheme}\n${proof.network}\n${canonicalJson(proof.payload)}`).digest('hex');
    const bound = await this.deps.ledger.bindPaymentId(id, payment, key);
    if (bound === payment) return undefined;
    return {
      kind: 'refused',
      code: 'payment_id_conflict',
      subject: 'payment',
      message: `payment identifier "${id}" was already used for another payment; choose a new id for a new payment`,
    };
  }

  /**
   * Settle-first: the money moves before the work runs. A settled payment without a result (the work
   * failed, or the settlement was confirmed later by reconciliation) runs the work on the next use of
   * the same proof, at no further charge.
   */
  private async settleThenWork(matched: Matched, key: string, payer: string, labels: PaymentLabels): Promise<PaymentOutcome> {
    const { rail, requirement, proof, received } = matched;
    const { ledger, log } = this.deps;
    const observe = this.deps.observe ?? NO_PAYMENT_OBSERVER;
    await ledger.transition(key, ['verified'], { state: 'pending', settledAmount: requirement.amount.toString() });
    const outcome = await observe.settle(labels, requirement.amount, facilitatorFor(rail, requirement.scheme)!.settle(proof, requirement)).catch((error: unknown) => {
      log.error({ err: error, key }, 'settlement threw; outcome unknown');
      return { status: 'unknown' as const, reason: errorSummary(error), payer, transaction: '' };
    });
    if (outcome.status === 'failed') {
      await this.recordAfterSettlement(key, { state: 'failed', error: outcome.reason });
      return settlementFailed(rail, received.wires, outcome.reason, outcome.transaction ?? '', outcome.payer ?? payer);
    }
    if (outcome.status === 'unknown') {
      await this.recordAfterSettlement(key, { state: 'pending', txHash: outcome.transaction || null, error: outcome.reason });
      return { kind: 'pending', transaction: outcome.transaction || null };
    }
    if (outcome.status === 'unavailable') {
      // nothing was sent, nothing ran: the same proof may come again
      await this.recordAfterSettlement(key, { state: 'released', error: outcome.reason });
      return SETTLEMENT_UNAVAILABLE;
    }
    // unrecorded: reconciliation confirms it, and the same proof then runs the work at no further charge
    if ((await this.recordAfterSettlement(key, { state: 'settled', txHash: outcome.transaction })) === undefined) {
      return { kind: 'pending', transaction: outcome.transaction };
    }
    return this.workForSettled(matched, key, outcome.transaction, outcome.payer || payer, requirement.amount, 0);
  }

  /**
   * Runs the work of a settled payment once per instance at a time, and keeps its result. Its failures are
   * counted: the last one allowed marks the payment for a refund instead of inviting another retry.
   */
  private async workForSettled(
    matched: Matched,
    key: string,
    transaction: string,
    payer: string,
    charged: bigint,
    failedBefore: number,
  ): Promise<PaymentOutcome> {
    if (this.working.has(key)) return IN_PROGRESS;
    this.working.add(key);
    try {
      const result = await runWork(matched.call, { payer, charge: charged }).catch(async (error: unknown) => {
        const exhausted = failedBefore + 1 >= this.attempts.settled;
        // settled: the answer must say so even when the ledger cannot count this failure (its database restarting)
        await this.deps.ledger
          .transition(key, ['settled'], { state: 'settled', countFailure: true, ...(exhausted ? { error: ATTEMPTS_EXHAUSTED } : {}) })
          .catch((failure: unknown) => this.deps.log.error({ err: failure, key }, 'could not count a failed work of a settled payment'));
        const paid = error instanceof ApiError ? error : new ApiError(502, 'upstream_error', 'generation failed');
        const next = exhausted
          ? `your payment is settled, but its work has now failed ${failedBefore + 1} times: it will not run again, and the payment is recorded for a refund by the operator`
          : `your payment is settled: retry with the same ${matched.received.source} to run it again at no charge`;
        throw new ApiError(paid.status, paid.code, `${paid.message.replace(/; nothing was charged.*$/, '')}; ${next}`, { headers: paid.headers });
      });
      const stored: StoredResult = { status: 200, body: result.body, media: result.media };
      // paid and recorded as paid: a ledger that cannot keep the result does not withhold it from its payer
      await this.deps.ledger.transition(key, ['settled'], { state: 'settled', result: stored }).catch((error: unknown) => {
        this.deps.log.error({ err: error, key }, 'could not store the result of a settled payment; delivered without it');
      });
      return delivered(stored, matched.rail, transaction, payer, matched.received.wires, charged);
    } finally {
      this.working.delete(key);
    }
  }

  /**
   * A proof whose key is in the ledger (on either wire). Only the accepted proof itself, for the same request
   * and within its validity, gets the result or the payment's state (see replay.ts); a forgery carrying the
   * public key, a wrong body or an expired proof is answered as an unknown proof is, with no hint.
   */
  private async alreadyUsed(matched: Matched, existing: PaymentRecord, mismatch?: string): Promise<PaymentOutcome> {
    const { call, rail, proof } = matched;
    const genuine = isAcceptedProof(existing, proof) && withinValidity(existing, proof);
    // only the payment's own proof hears that it is used up, whatever the body
    if (genuine) {
      const exhausted = this.attemptsExhausted(rail, existing);
      if (exhausted) return exhausted;
    }
    if (!genuine || existing.requestHash !== call.requestHash) return this.answerAsUnknown(matched, mismatch);
    switch (existing.state) {
      case 'settled': {
        const charged = BigInt(existing.settledAmount ?? existing.amount);
        if (existing.result) return delivered(existing.result, rail, existing.txHash ?? '', existing.payer, matched.received.wires, charged);
        // paid before the work ran (settle-first) and the work did not complete: run it now
        return this.workForSettled(matched, existing.key, existing.txHash ?? '', existing.payer, charged, existing.failedAttempts);
      }
      case 'pending':
        return { kind: 'pending', transaction: existing.txHash };
      default:
        return IN_PROGRESS;
    }
  }

  /**
   * The answer to a payment whose work failed as often as allowed, if it did. Unsettled: payment required
   * (nothing was charged; a new payment is needed). Settled first: refused, naming the transaction, which is owed a refund.
   */
  private attemptsExhausted(rail: PaymentRail, existing: PaymentRecord): PaymentOutcome | undefined {
    const failures = existing.failedAttempts;
    if ((existing.state === 'released' || existing.state === 'failed') && failures >= this.attempts.unsettled) {
      return required(
        `${ATTEMPTS_EXHAUSTED}: the paid work failed ${failures} times with this payment, which is no longer accepted; nothing was charged: sign a new payment`,
        [rail],
      );
    }
    if (existing.state === 'settled' && existing.result === null && failures >= this.attempts.settled) {
      return {
        kind: 'refused',
        code: 'payment_attempts_exhausted',
        message: `this payment is settled but its work failed ${failures} times; it will not run again, and the payment is recorded for a refund by the operator (quote its transaction)`,
        transaction: existing.txHash,
      };
    }
    return undefined;
  }

  /**
   * What a proof the ledger has never seen would get: the cheap mismatch found before the ledger, else the
   * verdict of its scheme's facilitator (a forged signature: its signature reason; the genuine proof with another
   * body or past its validity: what the chain says of it, e.g. a spent nonce, which the chain shows anyone).
   */
  private async answerAsUnknown({ rail, proof, requirement }: Matched, mismatch?: string): Promise<PaymentOutcome> {
    if (mismatch) return required(mismatch, [rail]);
    const verification = await facilitatorFor(rail, requirement.scheme)!
      .verify(proof, requirement)
      .catch((error: unknown) => {
        this.deps.log.error({ err: error }, 'facilitator verify failed');
        return undefined;
      });
    if (!verification) return FACILITATOR_UNAVAILABLE;
    return required(verification.isValid ? 'payment_already_used' : verification.invalidReason, [rail]);
  }

  private async discardMedia(ids: string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.deps.media.delete(id).catch(() => undefined)));
  }
}

export type { ProofIdentity };

function required(reason: string, rails: readonly PaymentRail[]): PaymentOutcome {
  return { kind: 'payment_required', reason, rails };
}

function delivered(result: StoredResult, rail: PaymentRail, transaction: string, payer: string, wires: Wire[], charged: bigint): PaymentOutcome {
  const receipt: SettlementReceipt = { success: true, transaction, network: rail.network.name, payer, amount: charged };
  return { kind: 'delivered', status: result.status, body: result.body, media: result.media, receipt, wires };
}

function settlementFailed(rail: PaymentRail, wires: Wire[], reason: string, transaction: string, payer: string): PaymentOutcome {
  const receipt: SettlementReceipt = {
    success: false,
    transaction,
    network: rail.network.name,
    payer,
    errorReason: reason,
    errorMessage: `the payment could not be settled (${reason}); nothing was charged and the result is withheld`,
  };
  return { kind: 'payment_required', reason: `settlement_failed: ${reason}`, rails: [rail], failed: { receipt, wires } };
}

