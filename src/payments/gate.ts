// The payment gate: quote -> 402, or decode -> match -> reserve -> verify -> work -> settle -> 200.
// It owns every money decision of a request; handlers only produce the result.
//
// Invariants:
// - one payment key is reserved once, atomically, before verification; the work runs at most once per key;
// - nothing is settled unless the work (and its media) completed; a failed work releases the reservation;
// - a settlement whose outcome is unknown stays 'pending' and is reconciled; the client retries the same proof.
import { encodeHeader, decodeHeader } from '../x402/encoding.ts';
import { resolveNetworkName, type NetworkName } from '../x402/networks.ts';
import { buildRequirement } from '../x402/requirements.ts';
import { evmPaymentKey, svmPaymentKey } from '../x402/payment-key.ts';
import {
  X402_VERSION,
  evmExactPayloadSchema,
  paymentPayloadSchema,
  svmExactPayloadSchema,
  type PaymentPayload,
  type PaymentRequiredBody,
  type PaymentRequirements,
  type SettlementResponse,
} from '../x402/types.ts';
import { ApiError } from '../errors.ts';
import type { Ledger, PaymentRecord, StoredResult } from '../store/ledger.ts';
import type { PaymentRail, PaymentRails } from './rails.ts';
import type { MediaStore } from '../media/media-store.ts';
import type { Logger } from 'pino';

export interface PaidCall {
  paymentHeader: string | undefined;
  networkHeader: string | undefined;
  /** absolute URL of the endpoint */
  resource: string;
  /** id of the model the call runs, recorded on the payment (revenue by model) */
  model: string;
  description: string;
  amount: bigint;
  maxTimeoutSeconds: number;
  /** JSON Schema of the body, advertised in outputSchema */
  bodyFields: Record<string, unknown>;
  /** identifies the request body, so a proof is honoured only for the request it paid for */
  requestHash: string;
  /** whether to settle before running the work on this network (see payments/settle-first.ts) */
  settleFirst: (network: NetworkName) => boolean;
  work: () => Promise<WorkResult>;
}

export interface WorkResult {
  body: unknown;
  /** media ids the body refers to */
  media: string[];
}

export interface GateResponse {
  status: number;
  /** a JSON value, or an already serialised JSON document */
  body: unknown;
  headers: Record<string, string>;
}

export interface GateDeps {
  rails: PaymentRails;
  ledger: Ledger;
  media: MediaStore;
  log: Logger;
}

const PAYMENT_REQUIRED = 'X-PAYMENT header is required';

export class PaymentGate {
  private readonly deps: GateDeps;
  /** serialised 402 bodies; bounded, since the key includes client-influenced parts (resource origin) */
  private readonly paymentRequiredCache = new Map<string, string>();
  /** settled payments whose work is running in this instance (settle-first) */
  private readonly working = new Set<string>();

  /**
   * Every rail, for a 402 that names no network: EVM networks first. x402-fetch 1.x with a viem account
   * (no chain) pays the first USDC requirement offered whatever its network, while a Solana signer filters
   * to its own networks anyway; so EVM-first lets both pay without X-Network.
   */
  private readonly anyNetworkRails: PaymentRail[];

  constructor(deps: GateDeps) {
    this.deps = deps;
    this.anyNetworkRails = [...deps.rails.values()].sort((a, b) => Number(a.network.family === 'svm') - Number(b.network.family === 'svm'));
  }

  get enabledNetworks(): NetworkName[] {
    return [...this.deps.rails.keys()];
  }

  requirementFor(rail: PaymentRail, call: PaidCall): PaymentRequirements {
    return buildRequirement({
      network: rail.network.name,
      amount: call.amount,
      resource: call.resource,
      description: call.description,
      payTo: rail.payTo,
      asset: rail.asset,
      maxTimeoutSeconds: call.maxTimeoutSeconds,
      extra: rail.extra,
      bodyFields: call.bodyFields,
    });
  }

  async handle(call: PaidCall): Promise<GateResponse> {
    const headerNetwork = call.networkHeader?.trim() || undefined;
    const namedRail = headerNetwork ? this.railFor(headerNetwork) : undefined;

    if (call.paymentHeader === undefined) {
      if (namedRail) return this.paymentRequired(call, [namedRail], PAYMENT_REQUIRED);
      const why = headerNetwork ? `"${headerNetwork}" is not a supported X-Network` : 'X-Network header is required';
      return this.paymentRequired(
        call,
        this.anyNetworkRails,
        `${PAYMENT_REQUIRED}; ${why} (supported: ${this.enabledNetworks.join(', ')})`,
      );
    }

    const payment = this.decodePayment(call.paymentHeader);
    const fallbackRails = namedRail ? [namedRail] : this.anyNetworkRails;
    if (typeof payment === 'string') return this.paymentRequired(call, fallbackRails, payment);

    // The network is the one the proof names; X-Network, when sent, must agree with it.
    if (headerNetwork && !namedRail) throw this.unsupportedNetwork(headerNetwork, 'X-Network');
    const rail = this.railFor(payment.network);
    if (!rail) throw this.unsupportedNetwork(payment.network, 'X-PAYMENT network');
    if (namedRail && namedRail !== rail) {
      throw new ApiError(
        400,
        'network_mismatch',
        `X-Network is ${namedRail.network.name} but the payment is for ${rail.network.name}`,
        { field: 'X-Network' },
      );
    }
    const requirements = this.requirementFor(rail, call);
    return this.settlePaidCall(call, rail, requirements, payment);
  }

  private railFor(network: string): PaymentRail | undefined {
    const name = resolveNetworkName(network);
    return name && this.deps.rails.get(name);
  }

  private unsupportedNetwork(network: string, where: string): ApiError {
    return new ApiError(
      400,
      'unsupported_network',
      `${where} "${network}" is not supported; supported values: ${this.enabledNetworks.join(', ')}`,
      { field: where === 'X-Network' ? 'X-Network' : 'X-PAYMENT' },
    );
  }

  /** Returns the payload, or the reason it cannot be one. */
  private decodePayment(header: string): PaymentPayload | string {
    const decoded = decodeHeader(header);
    if (decoded === undefined) return 'invalid_payment: X-PAYMENT is not base64-encoded JSON';
    const parsed = paymentPayloadSchema.safeParse(decoded);
    if (!parsed.success) return 'invalid_payment: X-PAYMENT must hold { x402Version, scheme, network, payload }';
    if (parsed.data.x402Version !== X402_VERSION) {
      return `unsupported_x402_version: ${parsed.data.x402Version} (this server speaks x402Version ${X402_VERSION})`;
    }
    if (parsed.data.scheme !== 'exact') return `unsupported_scheme: ${parsed.data.scheme} (only "exact" is accepted)`;
    return parsed.data;
  }

  /**
   * Derives the payment key and payer; `mismatch` names why the proof cannot pay this requirement,
   * found before touching the ledger where that is cheap (EVM: recipient and amount are in the clear).
   */
  private identify(
    rail: PaymentRail,
    requirements: PaymentRequirements,
    payment: PaymentPayload,
  ): { key: string; payer: string; mismatch?: string } | string {
    if (rail.network.family === 'evm') {
      const parsed = evmExactPayloadSchema.safeParse(payment.payload);
      if (!parsed.success) return 'invalid_payload: not an EIP-3009 authorization';
      const { authorization } = parsed.data;
      const key = evmPaymentKey(rail.network.chainId, rail.asset, parsed.data);
      const payer = authorization.from;
      if (authorization.to.toLowerCase() !== requirements.payTo.toLowerCase()) {
        return { key, payer, mismatch: 'invalid_exact_evm_payload_recipient_mismatch' };
      }
      if (BigInt(authorization.value) !== BigInt(requirements.maxAmountRequired)) {
        return { key, payer, mismatch: 'invalid_exact_evm_payload_authorization_value' };
      }
      return { key, payer };
    }
    const parsed = svmExactPayloadSchema.safeParse(payment.payload);
    const key = parsed.success ? svmPaymentKey(parsed.data) : undefined;
    if (!key) return 'invalid_payload: not a base64 Solana transaction';
    return { key, payer: '' };
  }

  private async settlePaidCall(
    call: PaidCall,
    rail: PaymentRail,
    requirements: PaymentRequirements,
    payment: PaymentPayload,
  ): Promise<GateResponse> {
    const { ledger, log } = this.deps;
    const identity = this.identify(rail, requirements, payment);
    if (typeof identity === 'string') return this.paymentRequired(call, [rail], identity);
    const { key } = identity;
    if (identity.mismatch) {
      // A proof already used elsewhere is reported as such, whatever else is wrong with it here.
      const existing = await ledger.get(key);
      if (existing && existing.state !== 'released' && existing.state !== 'failed') return this.alreadyUsed(call, rail, existing);
      return this.paymentRequired(call, [rail], identity.mismatch);
    }

    const reservation = await ledger.reserve({
      key,
      network: rail.network.name,
      payer: identity.payer,
      amount: requirements.maxAmountRequired,
      asset: rail.asset,
      payTo: rail.payTo,
      resource: call.resource,
      model: call.model,
      requestHash: call.requestHash,
      payload: payment,
      requirements,
    });
    if (!reservation.reserved) return this.alreadyUsed(call, rail, reservation.existing);

    const verification = await rail.facilitator.verify(payment, requirements).catch((error: unknown) => {
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
    if (call.settleFirst(rail.network.name)) return this.settleThenWork(call, rail, requirements, payment, key, payer);

    let result: WorkResult;
    try {
      result = await call.work();
    } catch (error) {
      await ledger.transition(key, ['verified'], { state: 'released', error: errorText(error) });
      throw error;
    }

    // The result is recorded before settlement starts, so it is never lost whatever settlement does.
    const stored: StoredResult = { status: 200, body: result.body, media: result.media };
    await ledger.transition(key, ['verified'], { state: 'pending', result: stored });

    const outcome = await rail.facilitator.settle(payment, requirements).catch((error: unknown) => {
      log.error({ err: error, key }, 'settlement threw; outcome unknown');
      return { status: 'unknown' as const, reason: errorText(error), payer, transaction: '' };
    });
    if (outcome.status === 'settled') {
      await ledger.transition(key, ['pending'], { state: 'settled', txHash: outcome.transaction });
      log.info({ key, network: rail.network.name, tx: outcome.transaction, amount: requirements.maxAmountRequired }, 'payment settled');
      return this.delivered(stored, rail, outcome.transaction, outcome.payer || payer);
    }
    if (outcome.status === 'failed') {
      await ledger.transition(key, ['pending'], { state: 'failed', error: outcome.reason, result: null });
      await this.discardMedia(result.media);
      log.warn({ key, reason: outcome.reason }, 'settlement failed; result withheld');
      const response = this.paymentRequired(call, [rail], `settlement_failed: ${outcome.reason}`);
      response.headers['X-PAYMENT-RESPONSE'] = encodeHeader({
        success: false,
        transaction: outcome.transaction ?? '',
        network: rail.network.name,
        payer: outcome.payer ?? payer,
        errorReason: outcome.reason,
      } satisfies SettlementResponse);
      return response;
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
    requirements: PaymentRequirements,
    payment: PaymentPayload,
    key: string,
    payer: string,
  ): Promise<GateResponse> {
    const { ledger, log } = this.deps;
    await ledger.transition(key, ['verified'], { state: 'pending' });
    const outcome = await rail.facilitator.settle(payment, requirements).catch((error: unknown) => {
      log.error({ err: error, key }, 'settlement threw; outcome unknown');
      return { status: 'unknown' as const, reason: errorText(error), payer, transaction: '' };
    });
    if (outcome.status === 'failed') {
      await ledger.transition(key, ['pending'], { state: 'failed', error: outcome.reason });
      return this.paymentRequired(call, [rail], `settlement_failed: ${outcome.reason}`);
    }
    if (outcome.status === 'unknown') {
      await ledger.transition(key, ['pending'], { state: 'pending', txHash: outcome.transaction || null, error: outcome.reason });
      return this.settlementPending(outcome.transaction || null);
    }
    await ledger.transition(key, ['pending'], { state: 'settled', txHash: outcome.transaction });
    return this.workForSettled(call, rail, key, outcome.transaction, outcome.payer || payer);
  }

  /** Runs the work of a settled payment once per instance at a time, and keeps its result. */
  private async workForSettled(call: PaidCall, rail: PaymentRail, key: string, transaction: string, payer: string): Promise<GateResponse> {
    if (this.working.has(key)) {
      throw new ApiError(409, 'payment_in_progress', 'this payment is already being processed; retry shortly with the same proof', {
        headers: { 'Retry-After': '1' },
      });
    }
    this.working.add(key);
    try {
      const result = await call.work().catch((error: unknown) => {
        const paid = error instanceof ApiError ? error : new ApiError(502, 'upstream_error', 'generation failed');
        throw new ApiError(paid.status, paid.code, `${paid.message.replace(/; nothing was charged.*$/, '')}; your payment is settled: retry with the same X-PAYMENT to run it again at no charge`, {
          headers: paid.headers,
        });
      });
      const stored: StoredResult = { status: 200, body: result.body, media: result.media };
      await this.deps.ledger.transition(key, ['settled'], { state: 'settled', result: stored });
      return this.delivered(stored, rail, transaction, payer);
    } finally {
      this.working.delete(key);
    }
  }

  /** A proof seen before: replay its result, or say why it cannot be used now. */
  private async alreadyUsed(call: PaidCall, rail: PaymentRail, existing: PaymentRecord): Promise<GateResponse> {
    if (existing.requestHash !== call.requestHash) {
      return this.paymentRequired(call, [rail], 'payment_already_used: this proof paid for a different request');
    }
    switch (existing.state) {
      case 'settled':
        if (existing.result) return this.delivered(existing.result, rail, existing.txHash ?? '', existing.payer);
        // paid before the work ran (settle-first) and the work did not complete: run it now
        return this.workForSettled(call, rail, existing.key, existing.txHash ?? '', existing.payer);
      case 'pending':
        return this.settlementPending(existing.txHash);
      default:
        throw new ApiError(409, 'payment_in_progress', 'this payment is already being processed; retry shortly with the same proof', {
          headers: { 'Retry-After': '1' },
        });
    }
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

  private delivered(result: StoredResult, rail: PaymentRail, transaction: string, payer: string): GateResponse {
    const receipt: SettlementResponse = { success: true, transaction, network: rail.network.name, payer };
    return { status: result.status, body: result.body, headers: { 'X-PAYMENT-RESPONSE': encodeHeader(receipt) } };
  }

  /** The 402 answer, serialised once per distinct (resource, amount, networks, reason): it is the hot path. */
  paymentRequired(call: PaidCall, rails: PaymentRail[], error: string): GateResponse {
    const cacheKey = `${call.resource}|${call.amount}|${call.maxTimeoutSeconds}|${rails.map((r) => r.network.name).join(',')}|${error}`;
    let body = this.paymentRequiredCache.get(cacheKey);
    if (body === undefined) {
      const document: PaymentRequiredBody = {
        x402Version: X402_VERSION,
        error,
        accepts: rails.map((rail) => this.requirementFor(rail, call)),
      };
      body = JSON.stringify(document);
      if (this.paymentRequiredCache.size >= 1000) this.paymentRequiredCache.clear();
      this.paymentRequiredCache.set(cacheKey, body);
    }
    return { status: 402, body, headers: {} };
  }

  private async discardMedia(ids: string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.deps.media.delete(id).catch(() => undefined)));
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
