// The HTTP wire edge of the payment core: x402's headers in (X-PAYMENT for v1, PAYMENT-SIGNATURE for v2),
// the core's outcome out as an HTTP answer (the v1 402 body beside the v2 PAYMENT-REQUIRED header, the
// receipt headers, the 409 of a pending settlement, the refusals' statuses). The core (payments/gate.ts)
// never sees a header; this is the one place that decides whether a request carries a payment.
import { ApiError, type ErrorCode } from '../errors.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import { resolveNetworkName } from '../x402/networks.ts';
import type { SettlementReceipt, Wire } from '../x402/model.ts';
import { decodeV1Proof, v1PaymentRequiredBody, v1Receipt, V1_PROOF_HEADER, V1_RECEIPT_HEADER } from '../x402/v1/codec.ts';
import {
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
  type V2Resource,
} from '../x402/v2/codec.ts';
import { freshSignInValues, SIGN_IN_PLACEHOLDERS, SIGN_IN_WITH_X, type SignInChallenge } from '../x402/sign-in-with-x.ts';
import { splicedHeader, type HeaderFiller } from '../x402/spliced-header.ts';
import type { PaymentGate } from '../payments/gate.ts';
import type { OfferAmendment, PaidCall, PaymentOutcome, ReceivedPayment, RefusalCode, WireNames } from '../payments/outcome.ts';

/** The request headers that carry a payment: a request with either is a paid call. */
export const PAYMENT_HEADERS = [V1_PROOF_HEADER, V2_PROOF_HEADER] as const;

/** How HTTP names what a client sends, in the reasons the core gives. */
export const HTTP_NAMES: WireNames = {
  noPayment: 'X-PAYMENT header is required',
  network: 'X-Network',
  noNetwork: 'X-Network header is required',
};

export type HeaderReader = (name: string) => string | undefined;

export function carriesPayment(header: HeaderReader): boolean {
  return PAYMENT_HEADERS.some((name) => header(name) !== undefined);
}

/**
 * The payment a request carries: undefined when none, a string when its header cannot be read (the 402's
 * reason). Both headers on one request must hold the same payment (some client stacks send both).
 */
export function paymentFromHeaders(header: HeaderReader): ReceivedPayment | string | undefined {
  const v2Header = header(V2_PROOF_HEADER);
  const v1Header = header(V1_PROOF_HEADER);
  const v2 = v2Header === undefined ? undefined : decodeV2Proof(v2Header);
  const v1 = v1Header === undefined ? undefined : decodeV1Proof(v1Header);
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
    return fromV2(v2, [2, 1]);
  }
  if (v2 !== undefined) return typeof v2 === 'string' ? v2 : fromV2(v2, [2]);
  if (v1 !== undefined) return typeof v1 === 'string' ? v1 : { proof: v1, wires: [1], source: V1_PROOF_HEADER };
  return undefined;
}

function fromV2(v2: V2Proof, wires: Wire[]): ReceivedPayment {
  const id = paymentIdOf(v2.extensions);
  if (typeof id === 'object') throw new ApiError(400, 'invalid_request', id.invalid, { field: V2_PROOF_HEADER });
  return { proof: v2.proof, wires, accepted: v2.accepted, source: V2_PROOF_HEADER, ...(id === undefined ? {} : { paymentId: id }) };
}

/** What a 402 says of the paid operation beside the core's offers (fixed per route and origin). */
export interface PaymentRequiredContext {
  call: Pick<PaidCall, 'resource' | 'description' | 'amount' | 'maxTimeoutSeconds' | 'metered'>;
  /** JSON Schema of the body, advertised in v1 outputSchema */
  bodyFields: Record<string, unknown>;
  /** v2 resource.serviceName */
  serviceName?: string | undefined;
  /** v2 resource.tags */
  tags?: string[] | undefined;
  /** v2 `extensions` of this route's 402, assembled in one place (route-extensions.ts) */
  extensions?: Record<string, unknown> | undefined;
  /** the sign-in-with-x challenge: given a fresh nonce and timestamps on each 402 (its nonce is single-use) */
  signInChallenge?: SignInChallenge | undefined;
}

/** An outcome as an HTTP answer. */
export interface PaymentAnswer {
  status: number;
  /** a JSON value, or an already serialised JSON document (the 402) */
  body: unknown;
  headers: Record<string, string>;
}

/** The status and error code of each refusal on HTTP. */
const REFUSALS: Record<RefusalCode, { status: number; code: ErrorCode }> = {
  unsupported_network: { status: 400, code: 'unsupported_network' },
  network_mismatch: { status: 400, code: 'network_mismatch' },
  payment_id_conflict: { status: 409, code: 'payment_id_conflict' },
  payment_in_progress: { status: 409, code: 'payment_in_progress' },
  payment_attempts_exhausted: { status: 409, code: 'payment_attempts_exhausted' },
  facilitator_unavailable: { status: 503, code: 'upstream_unavailable' },
};

interface PaymentRequiredDocument {
  body: string;
  header: string;
  /** what the header encodes, to encode it again with a fresh sign-in challenge */
  v2: V2PaymentRequiredParts;
  /** the header with the sign-in challenge, fresh values filled into it pre-encoded (made on first use) */
  signedIn?: { challenge: SignInChallenge; fill: HeaderFiller };
}

/** The v2 `resource` of a paid operation. */
export function v2ResourceOf(context: Pick<PaymentRequiredContext, 'call' | 'serviceName' | 'tags'>, mimeType = 'application/json'): V2Resource {
  return {
    url: context.call.resource,
    description: context.call.description,
    mimeType,
    ...(context.serviceName ? { serviceName: context.serviceName } : {}),
    ...(context.tags?.length ? { tags: context.tags } : {}),
  };
}

/** Renders outcomes as HTTP answers; holds the serialised 402s, the hot path of every unpaid call. */
export class HttpPaymentAnswers {
  /** serialised 402 answers; bounded, since the key includes client-influenced parts (resource origin) */
  private readonly paymentRequiredCache = new Map<string, PaymentRequiredDocument>();

  private readonly gate: PaymentGate;

  constructor(gate: PaymentGate) {
    this.gate = gate;
  }

  render(outcome: PaymentOutcome, context: PaymentRequiredContext, payment: PaidCall['payment']): PaymentAnswer {
    switch (outcome.kind) {
      case 'delivered':
        return { status: outcome.status, body: outcome.body, headers: receiptHeaders(outcome.receipt, outcome.wires) };
      case 'payment_required': {
        const answer = this.paymentRequired(context, outcome.rails, outcome.reason, outcome.amend);
        if (outcome.failed) Object.assign(answer.headers, receiptHeaders(outcome.failed.receipt, outcome.failed.wires));
        return answer;
      }
      case 'pending': {
        const error = new ApiError(
          409,
          'settlement_pending',
          'settlement was sent but is not confirmed yet; retry with the SAME X-PAYMENT to receive your result — do not pay again',
          { headers: { 'Retry-After': '5' } },
        );
        return { status: error.status, body: { ...error.toBody(), transaction: outcome.transaction }, headers: error.headers };
      }
      case 'refused': {
        const error = refusalError(outcome, payment);
        const body = outcome.transaction === undefined ? error.toBody() : { ...error.toBody(), transaction: outcome.transaction };
        return { status: error.status, body, headers: error.headers };
      }
    }
  }

  /**
   * The 402 answer on both wires: the v1 JSON body and the v2 PAYMENT-REQUIRED header. Serialised once per
   * distinct (resource, amount, networks, reason): it is the hot path. Only the sign-in challenge is fresh per 402.
   */
  private paymentRequired(context: PaymentRequiredContext, rails: Parameters<PaymentGate['offers']>[1], error: string, amend?: OfferAmendment): PaymentAnswer {
    const { call } = context;
    const cacheKey = `${call.resource}|${call.amount}|${call.maxTimeoutSeconds}|${rails.map((r) => r.network.name).join(',')}|${call.metered ?? false}|${error}`;
    // an amended answer is one payer's (its channel's state): never cached
    let document = amend ? undefined : this.paymentRequiredCache.get(cacheKey);
    if (document === undefined) {
      const offers = amendedOffers(this.gate, call, rails, amend);
      // upto and batch-settlement exist only in v2: the v1 body offers each rail's exact alone
      const v1Accepts = offers.requirements.filter((requirement) => requirement.scheme === 'exact');
      const v2: V2PaymentRequiredParts = {
        error,
        resource: v2ResourceOf(context),
        accepts: offers.requirements,
        extensions: { ...offers.extensions, ...context.extensions },
      };
      const route = { url: call.resource, description: call.description, bodyFields: context.bodyFields };
      document = { body: v1PaymentRequiredBody(error, v1Accepts, route), header: v2PaymentRequiredHeader(v2), v2 };
      if (!amend) {
        if (this.paymentRequiredCache.size >= 1000) this.paymentRequiredCache.clear();
        this.paymentRequiredCache.set(cacheKey, document);
      }
    }
    const header = context.signInChallenge ? signedInHeader(document, context.signInChallenge) : document.header;
    return { status: 402, body: document.body, headers: { [V2_REQUIRED_HEADER]: header, 'Cache-Control': 'no-store' } };
  }
}

/**
 * The core's offers for a payment-required answer: each rail's requirements, the one an amendment names (a payment
 * channel's state, for its payer's corrective answer) with its `extra` amended. Every wire's answer is made of them.
 */
export function amendedOffers(gate: PaymentGate, call: Parameters<PaymentGate['offers']>[0], rails: Parameters<PaymentGate['offers']>[1], amend?: OfferAmendment): ReturnType<PaymentGate['offers']> {
  const offers = gate.offers(call, rails);
  if (!amend) return offers;
  const requirements = offers.requirements.map((requirement) =>
    requirement.scheme === amend.scheme && requirement.network === amend.network ? { ...requirement, extra: { ...requirement.extra, ...amend.extra } } : requirement,
  );
  return { ...offers, requirements };
}

/** A refusal as the service's one error type (what a stream's last event reports, too). */
export function refusalError(outcome: Extract<PaymentOutcome, { kind: 'refused' }>, payment: PaidCall['payment']): ApiError {
  const { status, code } = REFUSALS[outcome.code];
  const field = outcome.subject === 'network' ? HTTP_NAMES.network : outcome.subject === 'payment' ? (typeof payment === 'object' ? payment.source : V2_PROOF_HEADER) : undefined;
  return new ApiError(status, code, outcome.message, {
    ...(field ? { field } : {}),
    ...(outcome.retryAfterSeconds ? { headers: { 'Retry-After': String(outcome.retryAfterSeconds) } } : {}),
  });
}

/** The receipt headers, one per wire the proof came on. */
export function receiptHeaders(receipt: SettlementReceipt, wires: readonly Wire[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (wires.includes(2)) headers[V2_RECEIPT_HEADER] = v2Receipt(receipt);
  if (wires.includes(1)) headers[V1_RECEIPT_HEADER] = v1Receipt(receipt);
  return headers;
}

/** PAYMENT-REQUIRED with the sign-in challenge holding a fresh nonce and timestamps. */
function signedInHeader(document: PaymentRequiredDocument, challenge: SignInChallenge): string {
  if (document.signedIn?.challenge !== challenge) {
    const { v2 } = document;
    const documentWith = (values: readonly string[]) => v2PaymentRequired({ ...v2, extensions: { ...v2.extensions, [SIGN_IN_WITH_X]: challenge.withValues(values) } });
    document.signedIn = { challenge, fill: splicedHeader(documentWith, SIGN_IN_PLACEHOLDERS) };
  }
  return document.signedIn.fill(freshSignInValues());
}
