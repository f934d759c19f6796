// The HTTP wire edge of the payment core: x402's headers in (X-PAYMENT for v1, PAYMENT-SIGNATURE for v2),
// the core's outcome out as an HTTP answer (the v1 402 body beside the v2 PAYMENT-REQUIRED header, the
// receipt headers, the 409 of a pending settlement, the refusals' statuses). The core (payments/gate.ts)
// never sees a header; this is the one place that decides whether a request carries a payment.
import { ApiError, type ErrorCode } from '../../errors.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { resolveNetworkName } from '../../x402/networks.ts';
import type { PaymentRequired, SettlementReceipt, Wire } from '../../x402/model.ts';
import type { ErrorAnswer, ErrorShape } from '../render-error.ts';
import { decodeV1Proof, v1PaymentRequiredBody, v1Receipt, V1_PROOF_HEADER, V1_RECEIPT_HEADER } from '../../x402/v1/codec.ts';
import { decodeV2Proof, paymentIdOf, v2PaymentRequired, v2PaymentRequiredHeader, v2Receipt, V2_PROOF_HEADER, V2_RECEIPT_HEADER, V2_REQUIRED_HEADER, type V2Proof } from '../../x402/v2/codec.ts';
import { freshSignInValues, SIGN_IN_PLACEHOLDERS, SIGN_IN_WITH_X, type SignInChallenge } from '../../x402/sign-in-with-x.ts';
import { splicedHeader, type HeaderFiller } from '../../x402/spliced-header.ts';
import type { PaymentGate } from '../../payments/gate.ts';
import type { PaidCall, PaymentOutcome, ReceivedPayment, RefusalCode, WireNames } from '../../payments/outcome.ts';

/** The request headers that carry a payment: a request with either is a paid call. */
export const PAYMENT_HEADERS = [V1_PROOF_HEADER, V2_PROOF_HEADER] as const;

/** How HTTP names what a client sends, in the reasons the core gives. */
export const HTTP_NAMES: WireNames = {
  noPayment: 'X-PAYMENT header is required',
  network: 'X-Network',
  networkField: 'X-Network',
  noNetwork: 'X-Network header is required',
  payment: V2_PROOF_HEADER,
  sameAgain: 'the SAME request with the same payment header',
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

/** An outcome as an HTTP answer. */
export interface PaymentAnswer {
  status: number;
  /** a JSON value, or an already serialised JSON document (the 402) */
  body: unknown;
  headers: Record<string, string>;
  /** a 402's headers made fresh for each answer (the sign-in nonce and times), for giving it again (unpaid-quotes.ts) */
  fresh?: (() => Record<string, string>) | undefined;
}

/** What the HTTP answers of a route need beside the outcome: its v1 body description and its error shape. */
export interface RouteAnswers {
  /** JSON Schema of the body's fields, advertised in the v1 402's outputSchema */
  bodyFields: Record<string, unknown>;
  errorShape: ErrorShape;
}

/** An outcome other than delivered as an error answer, with the transaction it names (a pending or settled payment's). */
export interface OutcomeError extends ErrorAnswer {
  transaction?: string | null | undefined;
}

/** The status and error code of each refusal on HTTP (and in an MCP error result, which states the same). */
const REFUSALS: Record<RefusalCode, { status: number; code: ErrorCode }> = {
  unsupported_network: { status: 400, code: 'unsupported_network' },
  network_mismatch: { status: 400, code: 'network_mismatch' },
  payment_id_conflict: { status: 409, code: 'payment_id_conflict' },
  payer_not_allowed: { status: 403, code: 'payer_not_allowed' },
  payment_in_progress: { status: 409, code: 'payment_in_progress' },
  payment_attempts_exhausted: { status: 409, code: 'payment_attempts_exhausted' },
  facilitator_unavailable: { status: 503, code: 'upstream_unavailable' },
};

/**
 * The one wording of every answer to a paid call that is neither its result nor a payment-required document:
 * a settlement still pending, a refusal, and (once a stream is open and no 402 can be sent) a failed settlement.
 * Every transport renders it in its own shape: HTTP JSON, a stream's last event, an MCP error result.
 */
export function outcomeError(outcome: Exclude<PaymentOutcome, { kind: 'delivered' }>, call: Pick<PaidCall, 'payment' | 'names'>): OutcomeError {
  switch (outcome.kind) {
    case 'payment_required':
      return { status: 402, code: 'settlement_failed', message: outcome.reason, headers: {} };
    case 'pending':
      return {
        status: 409,
        code: 'settlement_pending',
        message: `settlement was sent but is not confirmed yet; send ${call.names.sameAgain} again to receive your result — do not pay again`,
        headers: { 'Retry-After': '5' },
        transaction: outcome.transaction,
      };
    case 'refused': {
      const { status, code } = REFUSALS[outcome.code];
      const { names, payment } = call;
      const field = outcome.subject === 'network' ? names.networkField : outcome.subject === 'payment' ? (typeof payment === 'object' ? payment.source : names.payment) : undefined;
      return {
        status,
        code,
        message: outcome.message,
        field,
        headers: outcome.retryAfterSeconds ? { 'Retry-After': String(outcome.retryAfterSeconds) } : {},
        ...(outcome.transaction === undefined ? {} : { transaction: outcome.transaction }),
      };
    }
  }
}

interface PaymentRequiredDocument {
  body: string;
  header: string;
  /** what the header encodes, to encode it again with a fresh sign-in challenge */
  required: PaymentRequired;
  /** the header with the sign-in challenge, fresh values filled into it pre-encoded (made on first use) */
  signedIn?: { challenge: SignInChallenge; fill: HeaderFiller };
}

/** Renders outcomes as HTTP answers; holds the serialised 402s, the hot path of every unpaid call. */
export class HttpPaymentAnswers {
  /** serialised 402 answers; bounded, since the key includes client-influenced parts (resource origin) */
  private readonly paymentRequiredCache = new Map<string, PaymentRequiredDocument>();

  private readonly gate: PaymentGate;

  constructor(gate: PaymentGate) {
    this.gate = gate;
  }

  /** `outcome` as the route answers it; `signIn`: the challenge an unpaid call's 402 carries (a fresh nonce each). */
  render(outcome: PaymentOutcome, call: PaidCall, route: RouteAnswers, signIn?: SignInChallenge): PaymentAnswer {
    switch (outcome.kind) {
      case 'delivered':
        return { status: outcome.status, body: outcome.body, headers: receiptHeaders(outcome.receipt, outcome.wires) };
      case 'payment_required': {
        const answer = this.paymentRequired(call, outcome, route.bodyFields, signIn);
        if (outcome.failed) Object.assign(answer.headers, receiptHeaders(outcome.failed.receipt, outcome.failed.wires));
        return answer;
      }
      default: {
        const error = outcomeError(outcome, call);
        const shaped = route.errorShape(error) as object;
        return { status: error.status, body: error.transaction === undefined ? shaped : { ...shaped, transaction: error.transaction }, headers: error.headers };
      }
    }
  }

  /**
   * The 402 answer on both wires: the v1 JSON body and the v2 PAYMENT-REQUIRED header, from the core's one
   * document. Serialised once per distinct (resource, amount, networks, schemes, reason): it is the hot path. Only
   * the sign-in challenge is fresh per 402; an amended answer (one payer's channel state) is never cached.
   */
  private paymentRequired(call: PaidCall, outcome: Extract<PaymentOutcome, { kind: 'payment_required' }>, bodyFields: Record<string, unknown>, signIn?: SignInChallenge): PaymentAnswer {
    const cacheKey = `${call.resource}|${call.amount}|${call.maxTimeoutSeconds}|${outcome.rails.map((r) => r.network.name).join(',')}|${call.schemes.join(',')}|${outcome.reason}`;
    let document = outcome.amend ? undefined : this.paymentRequiredCache.get(cacheKey);
    if (document === undefined) {
      const required = this.gate.paymentRequired(call, outcome);
      // upto and batch-settlement exist only in v2: the v1 body offers each rail's exact alone
      const v1Accepts = required.accepts.filter((requirement) => requirement.scheme === 'exact');
      const route = { url: call.resource, description: call.description, bodyFields };
      document = { body: v1PaymentRequiredBody(required.reason, v1Accepts, route), header: v2PaymentRequiredHeader(required), required };
      if (!outcome.amend) {
        if (this.paymentRequiredCache.size >= 1000) this.paymentRequiredCache.clear();
        this.paymentRequiredCache.set(cacheKey, document);
      }
    }
    const signedIn = document;
    const header = signIn ? signedInHeader(signedIn, signIn) : document.header;
    const fresh = signIn ? () => ({ [V2_REQUIRED_HEADER]: signedInHeader(signedIn, signIn) }) : undefined;
    return { status: 402, body: document.body, headers: { [V2_REQUIRED_HEADER]: header, 'Cache-Control': 'no-store' }, fresh };
  }
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
    const { required } = document;
    const documentWith = (values: readonly string[]) => v2PaymentRequired({ ...required, extensions: { ...required.extensions, [SIGN_IN_WITH_X]: challenge.withValues(values) } });
    document.signedIn = { challenge, fill: splicedHeader(documentWith, SIGN_IN_PLACEHOLDERS) };
  }
  return document.signedIn.fill(freshSignInValues());
}
