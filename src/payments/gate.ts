// The payment gate: quote -> 402, or decode -> match -> reserve -> verify -> work -> settle -> 200.
// It owns every money decision of a request; handlers only produce the result.
//
// Invariants:
// - one payment key is reserved once, atomically, before verification; the work runs at most once per key;
// - nothing is settled unless the work (and its media) completed; a failed work releases the reservation;
// - a settlement whose outcome is unknown stays 'pending' and is reconciled; the client retries the same proof.
import { resolveNetworkName, type NetworkName } from '../x402/networks.ts';
import { decodeV1Proof, v1PaymentRequiredBody, v1Receipt, V1_PROOF_HEADER, V1_RECEIPT_HEADER } from '../x402/v1/codec.ts';
import {
  acceptedMismatch,
  decodeV2Proof,
  paymentIdOf,
  v2PaymentRequired,
  v2PaymentRequiredHeader,
  v2Receipt,
  V2_PROOF_HEADER,
  V2_RECEIPT_HEADER,
  V2_REQUIRED_HEADER,
  type V2PaymentRequiredParts,
  type V2Proof,
} from '../x402/v2/codec.ts';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../http/canonical-json.ts';
import { ApiError } from '../errors.ts';
import { freshSignInValues, SIGN_IN_PLACEHOLDERS, SIGN_IN_WITH_X, type SignInChallenge } from '../x402/sign-in-with-x.ts';
import { splicedHeader, type HeaderFiller } from '../x402/spliced-header.ts';
import { UNBOUNDED_ATTEMPTS, type Ledger, type PaymentRecord, type StoredResult } from '../store/ledger.ts';
import { facilitatorFor, type PaymentRail, type PaymentRails } from './rails.ts';
import { storedProof, storedRequirement, type DecodedProof, type PaymentProof, type PaymentRequirement, type SettlementReceipt, type Wire } from './model.ts';
import { SchemeRegistry } from './schemes/registry.ts';
import { isAcceptedProof, withinValidity } from './replay.ts';
import type { PaymentScheme } from './schemes/scheme.ts';
import type { MediaStore } from '../media/media-store.ts';
import type { Logger } from 'pino';
import { NO_PAYMENT_OBSERVER, type PaymentLabels, type PaymentObserver } from './payment-metrics.ts';
import { ChannelGate } from './channels/channel-gate.ts';
import { BATCH_SETTLEMENT_SCHEME } from '../x402/batch-settlement.ts';

export interface PaidCall {
  /** X-PAYMENT (x402 v1) */
  paymentHeader: string | undefined;
  /** PAYMENT-SIGNATURE (x402 v2) */
  paymentSignatureHeader?: string | undefined;
  networkHeader: string | undefined;
  /** absolute URL of the endpoint */
  resource: string;
  /** id of the model the call runs, recorded on the payment (revenue by model) */
  model: string;
  description: string;
  amount: bigint;
  maxTimeoutSeconds: number;
  /** JSON Schema of the body, advertised in v1 outputSchema */
  bodyFields: Record<string, unknown>;
  /** v2 resource.serviceName */
  serviceName?: string;
  /** v2 resource.tags */
  tags?: string[];
  /**
   * the sign-in-with-x challenge for this route: added to the `extensions` of the PAYMENT-REQUIRED header with a
   * fresh nonce and timestamps on each 402 (its nonce is single-use; src/x402/sign-in-with-x.ts)
   */
  signInChallenge?: SignInChallenge;
  /** v2 `extensions` of this route's 402, assembled in one place (src/http/route-extensions.ts) */
  extensions?: Record<string, unknown>;
  /** identifies the request body, so a proof is honoured only for the request it paid for */
  requestHash: string;
  /** whether to settle before running the work on this network (see payments/settle-first.ts) */
  settleFirst: (network: NetworkName) => boolean;
  /**
   * The price is a ceiling and the work reports its actual cost: `upto` is offered beside `exact` on rails
   * that have it (x402 v2), and settles that cost.
   */
  metered?: boolean;
  work: (payment: WorkPayment) => Promise<WorkResult>;
}

/** What the work is told of its payment when it starts (a stream states it in its headers). */
export interface WorkPayment {
  /** what the payer is charged, when known before the work runs; absent under `upto`, where the result's cost decides */
  charge?: bigint;
}

export interface WorkResult {
  body: unknown;
  /** media ids the body refers to */
  media: string[];
  /** metered calls: what the result costs, at most the quote (absent: the quote) */
  cost?: bigint;
}

export interface GateResponse {
  status: number;
  /** a JSON value, or an already serialised JSON document */
  body: unknown;
  headers: Record<string, string>;
  /** what the payer was charged for this answer (atomic units); absent when nothing was paid */
  charged?: bigint;
}

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
}

/** How many times the paid work of one payment may fail before its proof is refused (see config.maxFailedAttempts). */
export interface FailedAttemptLimits {
  /** settled after the work: the proof was released each time, nothing was charged */
  unsettled: number;
  /** settled before the work (settle-first): each retry reran paid-for work */
  settled: number;
}

const PAYMENT_REQUIRED = 'X-PAYMENT header is required';

/** the reason a payment whose work failed too often is refused, on the 402 and in the ledger */
export const ATTEMPTS_EXHAUSTED = 'payment_attempts_exhausted';

/** A proof as it arrived: the payment, the wires to answer on, and (v2) what the client says it accepted. */
interface ReceivedProof {
  proof: DecodedProof;
  /** every header version that carried it: the receipt is given on each */
  wires: Wire[];
  accepted?: V2Proof['accepted'];
  /** v2 payment-identifier extension: the client's id for this payment */
  paymentId?: string;
}

interface PaymentRequiredDocument {
  body: string;
  header: string;
  /** what the header encodes, to encode it again with a fresh sign-in challenge */
  v2: V2PaymentRequiredParts;
  /** the header with the sign-in challenge, fresh values filled into it pre-encoded (made on first use) */
  signedIn?: { challenge: SignInChallenge; fill: HeaderFiller };
}

export class PaymentGate {
  private readonly deps: GateDeps;
  private readonly schemes: SchemeRegistry;
  private readonly attempts: FailedAttemptLimits;
  /** serialised 402 answers; bounded, since the key includes client-influenced parts (resource origin) */
  private readonly paymentRequiredCache = new Map<string, PaymentRequiredDocument>();
  /** settled payments whose work is running in this instance (settle-first) */
  private readonly working = new Set<string>();
  /** payment channels (x402 batch-settlement), where the ledger keeps them */
  private readonly channels: ChannelGate | undefined;

  /**
   * Every rail, for a 402 that names no network: EVM networks first. x402-fetch 1.x with a viem account
   * (no chain) pays the first USDC requirement offered whatever its network, while a Solana signer filters
   * to its own networks anyway; so EVM-first lets both pay without X-Network.
   */
  private readonly anyNetworkRails: PaymentRail[];

  constructor(deps: GateDeps) {
    this.deps = deps;
    this.schemes = deps.schemes ?? new SchemeRegistry();
    this.attempts = deps.maxFailedAttempts ?? { unsettled: UNBOUNDED_ATTEMPTS, settled: UNBOUNDED_ATTEMPTS };
    this.enabledNetworks = [...deps.rails.keys()];
    this.anyNetworkRails = [...deps.rails.values()].sort((a, b) => Number(a.network.family === 'svm') - Number(b.network.family === 'svm'));
    this.channels = deps.ledger.channels ? new ChannelGate({ store: deps.ledger.channels, log: deps.log }) : undefined;
  }

  /** the networks of the rails, fixed once the gate is made (as anyNetworkRails is) */
  readonly enabledNetworks: readonly NetworkName[];

  /** The server's own requirement for this call on this rail (every rail offers `exact`). */
  requirementFor(rail: PaymentRail, call: PaidCall, scheme = 'exact'): PaymentRequirement {
    return {
      scheme,
      network: rail.network.name,
      amount: call.amount,
      payTo: rail.payTo,
      asset: rail.asset,
      maxTimeoutSeconds: call.maxTimeoutSeconds,
      extra:
        scheme === 'upto' && rail.upto
          ? { ...rail.extra, ...rail.upto.extra }
          : scheme === BATCH_SETTLEMENT_SCHEME && rail.channels
            ? { ...rail.extra, ...rail.channels.extra }
            : rail.extra,
      resource: { url: call.resource, description: call.description },
    };
  }

  /** `upto` is offered for metered calls on rails that have it. */
  private uptoOffered(rail: PaymentRail, call: PaidCall): boolean {
    return Boolean(call.metered && rail.upto);
  }

  async handle(call: PaidCall): Promise<GateResponse> {
    const headerNetwork = call.networkHeader?.trim() || undefined;
    const namedRail = headerNetwork ? this.railFor(headerNetwork) : undefined;

    if (call.paymentHeader === undefined && call.paymentSignatureHeader === undefined) {
      if (namedRail) return this.paymentRequired(call, [namedRail], PAYMENT_REQUIRED);
      const why = headerNetwork ? `"${headerNetwork}" is not a supported X-Network` : 'X-Network header is required';
      return this.paymentRequired(
        call,
        this.anyNetworkRails,
        `${PAYMENT_REQUIRED}; ${why} (supported: ${this.enabledNetworks.join(', ')})`,
      );
    }

    const received = this.receivedProof(call);
    const fallbackRails = namedRail ? [namedRail] : this.anyNetworkRails;
    if (typeof received === 'string') return this.paymentRequired(call, fallbackRails, received);

    // The network is the one the proof names; X-Network, when sent, must agree with it.
    if (headerNetwork && !namedRail) throw this.unsupportedNetwork(headerNetwork, 'X-Network');
    const rail = this.railFor(received.proof.network);
    if (!rail) {
      const header = proofHeaderOf(received.wires);
      throw this.unsupportedNetwork(received.proof.network, `${header} network`, header);
    }
    const proof: PaymentProof = { ...received.proof, network: rail.network.name };
    if (namedRail && namedRail !== rail) {
      throw new ApiError(
        400,
        'network_mismatch',
        `X-Network is ${namedRail.network.name} but the payment is for ${rail.network.name}`,
        { field: 'X-Network' },
      );
    }
    if (proof.scheme === BATCH_SETTLEMENT_SCHEME && rail.channels && this.channels) {
      // a payment channel: per-channel state instead of one-use keys (payments/channels/channel-gate.ts)
      const requirement = this.requirementFor(rail, call, BATCH_SETTLEMENT_SCHEME);
      const mismatch = received.accepted && acceptedMismatch(received.accepted, requirement);
      if (mismatch) return this.paymentRequired(call, [rail], mismatch);
      const channelRail = { ...rail, channels: rail.channels };
      return this.channels.handle({ call, rail: channelRail, requirement, proof, paymentRequired: (error) => this.paymentRequired(call, [rail], error) });
    }
    const scheme = this.schemes.get(proof.scheme, rail.network.family);
    if (!scheme || (proof.scheme === 'upto' && !this.uptoOffered(rail, call))) {
      const accepted = this.schemes.names(rail.network.family).map((name) => `"${name}"`).join(', ');
      return this.paymentRequired(call, [rail], `unsupported_scheme: ${proof.scheme} (accepted on ${rail.network.name}: ${accepted})`);
    }
    const requirement = this.requirementFor(rail, call, proof.scheme);
    // A v2 proof names the requirement it accepted: it must be this server's own, for this body.
    const mismatch = received.accepted && acceptedMismatch(received.accepted, requirement);
    if (mismatch) return this.paymentRequired(call, [rail], mismatch);
    if (received.paymentId !== undefined) await this.checkPaymentId(received.paymentId, proof);
    return this.settlePaidCall(call, rail, scheme, requirement, proof, received.wires);
  }

  /**
   * Decodes PAYMENT-SIGNATURE and/or X-PAYMENT. Both on one request must hold the same payment (some
   * client stacks send both); a string is the reason no proof could be read.
   */
  private receivedProof(call: PaidCall): ReceivedProof | string {
    const v2 = call.paymentSignatureHeader === undefined ? undefined : decodeV2Proof(call.paymentSignatureHeader);
    const v1 = call.paymentHeader === undefined ? undefined : decodeV1Proof(call.paymentHeader);
    if (v2 !== undefined && v1 !== undefined) {
      const same =
        typeof v2 !== 'string' &&
        typeof v1 !== 'string' &&
        v2.proof.scheme === v1.scheme &&
        resolveNetworkName(v2.proof.network) === resolveNetworkName(v1.network) &&
        canonicalJson(v2.proof.payload) === canonicalJson(v1.payload);
      if (!same) {
        throw new ApiError(400, 'payment_mismatch', `${V2_PROOF_HEADER} and ${V1_PROOF_HEADER} must carry the same payment; send one of them`, {
          field: V2_PROOF_HEADER,
        });
      }
      return { proof: v2.proof, wires: [2, 1], accepted: v2.accepted, ...this.paymentIdOf(v2) };
    }
    if (v2 !== undefined) return typeof v2 === 'string' ? v2 : { proof: v2.proof, wires: [2], accepted: v2.accepted, ...this.paymentIdOf(v2) };
    if (v1 !== undefined) return typeof v1 === 'string' ? v1 : { proof: v1, wires: [1] };
    return 'invalid_payment: no payment header';
  }

  private paymentIdOf(v2: V2Proof): { paymentId?: string } {
    const id = paymentIdOf(v2.extensions);
    if (typeof id === 'object') throw new ApiError(400, 'invalid_request', id.invalid, { field: V2_PROOF_HEADER });
    return id === undefined ? {} : { paymentId: id };
  }

  /**
   * payment-identifier: the id is bound, in the ledger and before any verification, to the first payment it came
   * with. The same id with the same payment goes on to the payment's own one-use key (its stored result, or
   * 409 while it runs); with another payment it is a 409, whichever instance sees it.
   */
  private async checkPaymentId(id: string, proof: PaymentProof): Promise<void> {
    const payment = createHash('sha256').update(`${proof.scheme}\n${proof.network}\n${canonicalJson(proof.payload)}`).digest('hex');
    const bound = await this.deps.ledger.bindPaymentId(id, payment);
    if (bound !== payment) {
      throw new ApiError(409, 'payment_id_conflict', `payment identifier "${id}" was already used for another payment; choose a new id for a new payment`, {
        field: V2_PROOF_HEADER,
      });
    }
  }

  private railFor(network: string): PaymentRail | undefined {
    const name = resolveNetworkName(network);
    return name && this.deps.rails.get(name);
  }

  private unsupportedNetwork(network: string, where: string, field = where): ApiError {
    return new ApiError(
      400,
      'unsupported_network',
      `${where} "${network}" is not supported; supported values: ${this.enabledNetworks.join(', ')}`,
      { field },
    );
  }

  private async settlePaidCall(
    call: PaidCall,
    rail: PaymentRail,
    scheme: PaymentScheme,
    requirement: PaymentRequirement,
    proof: PaymentProof,
    wires: Wire[],
  ): Promise<GateResponse> {
    const { ledger, log } = this.deps;
    const identity = scheme.identify(rail.network, requirement, proof);
    if (typeof identity === 'string') return this.paymentRequired(call, [rail], identity);
    const { key } = identity;
    if (identity.mismatch) {
      // A proof already used elsewhere is reported as such, whatever else is wrong with it here.
      const existing = await ledger.get(key);
      if (existing && existing.state !== 'released' && existing.state !== 'failed') {
        return this.alreadyUsed(call, rail, existing, wires, proof, requirement, identity.mismatch);
      }
      return this.paymentRequired(call, [rail], identity.mismatch);
    }

    const reservation = await ledger.reserve({
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
    }, this.attempts.unsettled);
    if (!reservation.reserved) return this.alreadyUsed(call, rail, reservation.existing, wires, proof, requirement);

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
      if (!verification) {
        throw new ApiError(503, 'upstream_unavailable', 'the payment facilitator is unavailable; nothing was charged, retry later', {
          headers: { 'Retry-After': '5' },
        });
      }
      return this.paymentRequired(call, [rail], reason);
    }
    const payer = verification.payer;
    await ledger.transition(key, ['reserved'], { state: 'verified', payer });
    // upto settles the cost of the result, so it always works first
    if (requirement.scheme !== 'upto' && call.settleFirst(rail.network.name)) {
      return this.settleThenWork(call, rail, requirement, proof, wires, key, payer, labels);
    }

    let result: WorkResult;
    try {
      result = await call.work(requirement.scheme === 'upto' ? {} : { charge: requirement.amount });
    } catch (error) {
      // released, so the same proof may try again, but only so often (reserve refuses it past the bound)
      await ledger.transition(key, ['verified'], { state: 'released', error: errorText(error), countFailure: true });
      throw error;
    }

    // What is charged: the price, or (upto) the result's cost, never above the ceiling the payer authorized.
    const charged = requirement.scheme === 'upto' && result.cost !== undefined && result.cost < requirement.amount ? result.cost : requirement.amount;
    // The result is recorded before settlement starts, so it is never lost whatever settlement does.
    const stored: StoredResult = { status: 200, body: result.body, media: result.media };
    await ledger.transition(key, ['verified'], { state: 'pending', result: stored, settledAmount: charged.toString() });

    const outcome = await observe.settle(labels, charged, facilitator.settle(proof, requirement, charged)).catch((error: unknown) => {
      log.error({ err: error, key }, 'settlement threw; outcome unknown');
      return { status: 'unknown' as const, reason: errorText(error), payer, transaction: '' };
    });
    if (outcome.status === 'settled') {
      // an upto cost of 0 moves nothing: no transaction
      await ledger.transition(key, ['pending'], { state: 'settled', txHash: outcome.transaction || null });
      log.info({ key, network: rail.network.name, tx: outcome.transaction, amount: charged.toString() }, 'payment settled');
      return this.delivered(stored, rail, outcome.transaction, outcome.payer || payer, wires, charged);
    }
    if (outcome.status === 'failed') {
      await ledger.transition(key, ['pending'], { state: 'failed', error: outcome.reason, result: null });
      await this.discardMedia(result.media);
      log.warn({ key, reason: outcome.reason }, 'settlement failed; result withheld');
      return this.settlementFailed(call, rail, wires, outcome.reason, outcome.transaction ?? '', outcome.payer ?? payer);
    }
    await ledger.transition(key, ['pending'], { state: 'pending', txHash: outcome.transaction || null, error: outcome.reason });
    log.warn({ key, tx: outcome.transaction, reason: outcome.reason }, 'settlement outcome unknown; will reconcile');
    return this.settlementPending(outcome.transaction || null);
  }

  /**
   * Settle-first: the money moves before the work runs. A settled payment without a result (the work
   * failed, or the settlement was confirmed later by reconciliation) runs the work on the next use of
   * the same proof, at no further charge.
   */
  private async settleThenWork(
    call: PaidCall,
    rail: PaymentRail,
    requirement: PaymentRequirement,
    proof: PaymentProof,
    wires: Wire[],
    key: string,
    payer: string,
    labels: PaymentLabels,
  ): Promise<GateResponse> {
    const { ledger, log } = this.deps;
    const observe = this.deps.observe ?? NO_PAYMENT_OBSERVER;
    await ledger.transition(key, ['verified'], { state: 'pending', settledAmount: requirement.amount.toString() });
    const outcome = await observe.settle(labels, requirement.amount, rail.facilitator.settle(proof, requirement)).catch((error: unknown) => {
      log.error({ err: error, key }, 'settlement threw; outcome unknown');
      return { status: 'unknown' as const, reason: errorText(error), payer, transaction: '' };
    });
    if (outcome.status === 'failed') {
      await ledger.transition(key, ['pending'], { state: 'failed', error: outcome.reason });
      return this.settlementFailed(call, rail, wires, outcome.reason, outcome.transaction ?? '', outcome.payer ?? payer);
    }
    if (outcome.status === 'unknown') {
      await ledger.transition(key, ['pending'], { state: 'pending', txHash: outcome.transaction || null, error: outcome.reason });
      return this.settlementPending(outcome.transaction || null);
    }
    await ledger.transition(key, ['pending'], { state: 'settled', txHash: outcome.transaction });
    return this.workForSettled(call, rail, key, outcome.transaction, outcome.payer || payer, wires, requirement.amount, 0);
  }

  /**
   * Runs the work of a settled payment once per instance at a time, and keeps its result. Its failures are
   * counted: the last one allowed marks the payment for a refund instead of inviting another retry.
   */
  private async workForSettled(
    call: PaidCall,
    rail: PaymentRail,
    key: string,
    transaction: string,
    payer: string,
    wires: Wire[],
    charged: bigint,
    failedBefore: number,
  ): Promise<GateResponse> {
    if (this.working.has(key)) {
      throw new ApiError(409, 'payment_in_progress', 'this payment is already being processed; retry shortly with the same proof', {
        headers: { 'Retry-After': '1' },
      });
    }
    this.working.add(key);
    try {
      const result = await call.work({ charge: charged }).catch(async (error: unknown) => {
        const exhausted = failedBefore + 1 >= this.attempts.settled;
        await this.deps.ledger.transition(key, ['settled'], { state: 'settled', countFailure: true, ...(exhausted ? { error: ATTEMPTS_EXHAUSTED } : {}) });
        const paid = error instanceof ApiError ? error : new ApiError(502, 'upstream_error', 'generation failed');
        const next = exhausted
          ? `your payment is settled, but its work has now failed ${failedBefore + 1} times: it will not run again, and the payment is recorded for a refund by the operator`
          : `your payment is settled: retry with the same ${proofHeaderOf(wires)} to run it again at no charge`;
        throw new ApiError(paid.status, paid.code, `${paid.message.replace(/; nothing was charged.*$/, '')}; ${next}`, { headers: paid.headers });
      });
      const stored: StoredResult = { status: 200, body: result.body, media: result.media };
      await this.deps.ledger.transition(key, ['settled'], { state: 'settled', result: stored });
      return this.delivered(stored, rail, transaction, payer, wires, charged);
    } finally {
      this.working.delete(key);
    }
  }

  /**
   * A proof whose key is in the ledger (on either wire). Only the accepted proof itself, for the same request
   * and within its validity, gets the result or the payment's state (see replay.ts); a forgery carrying the
   * public key, a wrong body or an expired proof is answered as an unknown proof is, with no hint.
   */
  private async alreadyUsed(
    call: PaidCall,
    rail: PaymentRail,
    existing: PaymentRecord,
    wires: Wire[],
    proof: PaymentProof,
    requirement: PaymentRequirement,
    mismatch?: string,
  ): Promise<GateResponse> {
    const genuine = isAcceptedProof(existing, proof) && withinValidity(existing, proof);
    // only the payment's own proof hears that it is used up, whatever the body
    if (genuine) {
      const exhausted = this.attemptsExhausted(call, rail, existing);
      if (exhausted) return exhausted;
    }
    if (!genuine || existing.requestHash !== call.requestHash) {
      return this.answerAsUnknown(call, rail, proof, requirement, mismatch);
    }
    switch (existing.state) {
      case 'settled': {
        const charged = BigInt(existing.settledAmount ?? existing.amount);
        if (existing.result) return this.delivered(existing.result, rail, existing.txHash ?? '', existing.payer, wires, charged);
        // paid before the work ran (settle-first) and the work did not complete: run it now
        return this.workForSettled(call, rail, existing.key, existing.txHash ?? '', existing.payer, wires, charged, existing.failedAttempts);
      }
      case 'pending':
        return this.settlementPending(existing.txHash);
      default:
        throw new ApiError(409, 'payment_in_progress', 'this payment is already being processed; retry shortly with the same proof', {
          headers: { 'Retry-After': '1' },
        });
    }
  }

  /**
   * The answer to a payment whose work failed as often as allowed, if it did. Unsettled: a 402 (nothing was
   * charged; a new payment is needed). Settled first: a 409 naming the transaction, which is owed a refund.
   */
  private attemptsExhausted(call: PaidCall, rail: PaymentRail, existing: PaymentRecord): GateResponse | undefined {
    const failures = existing.failedAttempts;
    if ((existing.state === 'released' || existing.state === 'failed') && failures >= this.attempts.unsettled) {
      return this.paymentRequired(
        call,
        [rail],
        `${ATTEMPTS_EXHAUSTED}: the paid work failed ${failures} times with this payment, which is no longer accepted; nothing was charged: sign a new payment`,
      );
    }
    if (existing.state === 'settled' && existing.result === null && failures >= this.attempts.settled) {
      const error = new ApiError(
        409,
        ATTEMPTS_EXHAUSTED,
        `this payment is settled but its work failed ${failures} times; it will not run again, and the payment is recorded for a refund by the operator (quote its transaction)`,
      );
      return { status: error.status, body: { ...error.toBody(), transaction: existing.txHash }, headers: error.headers };
    }
    return undefined;
  }

  /**
   * What a proof the ledger has never seen would get: the cheap mismatch found before the ledger, else the
   * facilitator's own verdict (a forged signature: its signature reason; the genuine proof with another body
   * or past its validity: what the chain says of it, e.g. a spent nonce, which the chain shows anyone).
   */
  private async answerAsUnknown(call: PaidCall, rail: PaymentRail, proof: PaymentProof, requirement: PaymentRequirement, mismatch?: string): Promise<GateResponse> {
    if (mismatch) return this.paymentRequired(call, [rail], mismatch);
    const verification = await rail.facilitator.verify(proof, requirement).catch((error: unknown) => {
      this.deps.log.error({ err: error }, 'facilitator verify failed');
      return undefined;
    });
    if (!verification) {
      throw new ApiError(503, 'upstream_unavailable', 'the payment facilitator is unavailable; nothing was charged, retry later', {
        headers: { 'Retry-After': '5' },
      });
    }
    return this.paymentRequired(call, [rail], verification.isValid ? 'payment_already_used' : verification.invalidReason);
  }

  private settlementPending(transaction: string | null): GateResponse {
    const error = new ApiError(
      409,
      'settlement_pending',
      'settlement was sent but is not confirmed yet; retry with the SAME X-PAYMENT to receive your result — do not pay again',
      { headers: { 'Retry-After': '5' } },
    );
    return { status: error.status, body: { ...error.toBody(), transaction }, headers: error.headers };
  }

  /** The receipt headers, one per wire the proof came on. */
  private receiptHeaders(receipt: SettlementReceipt, wires: Wire[]): Record<string, string> {
    const headers: Record<string, string> = {};
    if (wires.includes(2)) headers[V2_RECEIPT_HEADER] = v2Receipt(receipt);
    if (wires.includes(1)) headers[V1_RECEIPT_HEADER] = v1Receipt(receipt);
    return headers;
  }

  private delivered(result: StoredResult, rail: PaymentRail, transaction: string, payer: string, wires: Wire[], charged: bigint): GateResponse {
    const receipt: SettlementReceipt = { success: true, transaction, network: rail.network.name, payer, amount: charged };
    return { status: result.status, body: result.body, headers: this.receiptHeaders(receipt, wires), charged };
  }

  private settlementFailed(call: PaidCall, rail: PaymentRail, wires: Wire[], reason: string, transaction: string, payer: string): GateResponse {
    const response = this.paymentRequired(call, [rail], `settlement_failed: ${reason}`);
    const receipt: SettlementReceipt = {
      success: false,
      transaction,
      network: rail.network.name,
      payer,
      errorReason: reason,
      errorMessage: `the payment could not be settled (${reason}); nothing was charged and the result is withheld`,
    };
    Object.assign(response.headers, this.receiptHeaders(receipt, wires));
    return response;
  }

  /**
   * The 402 answer on both wires: the v1 JSON body and the v2 PAYMENT-REQUIRED header. Serialised once per
   * distinct (resource, amount, networks, reason): it is the hot path.
   */
  paymentRequired(call: PaidCall, rails: PaymentRail[], error: string): GateResponse {
    const cacheKey = `${call.resource}|${call.amount}|${call.maxTimeoutSeconds}|${rails.map((r) => r.network.name).join(',')}|${call.metered ?? false}|${error}`;
    let document = this.paymentRequiredCache.get(cacheKey);
    if (document === undefined) {
      const accepts = rails.map((rail) => this.requirementFor(rail, call));
      // upto exists only in v2: beside each rail's exact, in PAYMENT-REQUIRED alone
      // upto is offered when X-Network names the network (one rail): beside every network at once it would
      // take PAYMENT-REQUIRED past 8 KB, and a proof under upto is still accepted on any rail that offers it
      const metered = rails.length === 1 ? rails.filter((rail) => this.uptoOffered(rail, call)) : [];
      // batch-settlement (payment channels) beside exact where the rail offers it, on the same one-rail terms as upto
      const channels = rails.length === 1 && this.channels ? rails.filter((rail) => rail.channels) : [];
      const v2Accepts = rails.flatMap((rail) => [
        this.requirementFor(rail, call),
        ...(metered.includes(rail) ? [this.requirementFor(rail, call, 'upto')] : []),
        ...(channels.includes(rail) ? [this.requirementFor(rail, call, BATCH_SETTLEMENT_SCHEME)] : []),
      ]);
      const extensions = Object.assign({}, ...metered.map((rail) => rail.upto!.extensions), call.extensions ?? {});
      const route = { url: call.resource, description: call.description, bodyFields: call.bodyFields };
      const v2 = {
        error,
        resource: {
          url: call.resource,
          description: call.description,
          mimeType: 'application/json',
          ...(call.serviceName ? { serviceName: call.serviceName } : {}),
          ...(call.tags?.length ? { tags: call.tags } : {}),
        },
        accepts: v2Accepts,
        extensions,
      };
      document = { body: v1PaymentRequiredBody(error, accepts, route), header: v2PaymentRequiredHeader(v2), v2 };
      if (this.paymentRequiredCache.size >= 1000) this.paymentRequiredCache.clear();
      this.paymentRequiredCache.set(cacheKey, document);
    }
    const header = call.signInChallenge ? this.signedInHeader(document, call.signInChallenge) : document.header;
    return { status: 402, body: document.body, headers: { [V2_REQUIRED_HEADER]: header, 'Cache-Control': 'no-store' } };
  }

  /** PAYMENT-REQUIRED with the sign-in challenge holding a fresh nonce and timestamps. */
  private signedInHeader(document: PaymentRequiredDocument, challenge: SignInChallenge): string {
    if (document.signedIn?.challenge !== challenge) {
      const { v2 } = document;
      const documentWith = (values: readonly string[]) =>
        v2PaymentRequired({ ...v2, extensions: { ...v2.extensions, [SIGN_IN_WITH_X]: challenge.withValues(values) } });
      document.signedIn = { challenge, fill: splicedHeader(documentWith, SIGN_IN_PLACEHOLDERS) };
    }
    return document.signedIn.fill(freshSignInValues());
  }

  private async discardMedia(ids: string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.deps.media.delete(id).catch(() => undefined)));
  }
}

/** the header a client sent its proof in (v2's when it sent both) */
function proofHeaderOf(wires: Wire[]): string {
  return wires.includes(2) ? V2_PROOF_HEADER : V1_PROOF_HEADER;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
