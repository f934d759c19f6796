// The x402 v2 wire: PAYMENT-SIGNATURE in, PAYMENT-REQUIRED (beside the v1 body) and PAYMENT-RESPONSE out.
// Networks are CAIP-2 ids on this wire; the internal model keeps the v1 names.
import { z } from 'zod';
import { isValidPaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { decodeHeader, encodeHeader } from '../encoding.ts';
import { caip2Of, receiptAmount, type DecodedProof, type PaymentRequired, type PaymentRequirement, type ResourceInfo, type SettlementReceipt } from '../model.ts';

export const V2_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
export const V2_PROOF_HEADER = 'PAYMENT-SIGNATURE';
export const V2_RECEIPT_HEADER = 'PAYMENT-RESPONSE';

export interface V2Requirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

/** the v2 `resource`: the model's, as it is */
export type V2Resource = ResourceInfo;

export interface V2PaymentRequired {
  x402Version: 2;
  error: string;
  resource: V2Resource;
  accepts: V2Requirements[];
  extensions?: Record<string, unknown>;
}

const acceptedSchema = z.object({
  scheme: z.string(),
  network: z.string(),
  amount: z.string().regex(/^\d{1,78}$/),
  asset: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number().int().optional(),
  extra: z.record(z.string(), z.unknown()).nullish(),
});

const paymentPayloadSchema = z.object({
  x402Version: z.number().int(),
  accepted: acceptedSchema,
  payload: z.record(z.string(), z.unknown()),
  extensions: z.record(z.string(), z.unknown()).nullish(),
});

/** A decoded PAYMENT-SIGNATURE: the proof, what the client says it accepted, and the extensions it echoed. */
export interface V2Proof {
  proof: DecodedProof;
  accepted: Pick<PaymentRequirement, 'scheme' | 'amount' | 'asset' | 'payTo'>;
  extensions: Record<string, unknown>;
}

export function v2Requirements(requirement: PaymentRequirement): V2Requirements {
  return {
    scheme: requirement.scheme,
    network: caip2Of(requirement.network),
    amount: requirement.amount.toString(),
    asset: requirement.asset,
    payTo: requirement.payTo,
    maxTimeoutSeconds: requirement.maxTimeoutSeconds,
    extra: requirement.extra,
  };
}

export interface V2PaymentPayload {
  x402Version: 2;
  accepted: V2Requirements;
  payload: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

/** A PaymentPayload as a facilitator's /verify and /settle take it: `payload` accepted for `requirement`, with the client's extensions. */
export function v2PaymentPayload(requirement: PaymentRequirement, payload: object, extensions?: Record<string, unknown>): V2PaymentPayload {
  return { x402Version: 2, accepted: v2Requirements(requirement), payload: payload as Record<string, unknown>, ...(extensions ? { extensions } : {}) };
}

/** The PAYMENT-REQUIRED document (its JSON, before base64). */
export function v2PaymentRequired(document: PaymentRequired): V2PaymentRequired {
  const required: V2PaymentRequired = {
    x402Version: 2,
    error: document.reason,
    resource: document.resource,
    accepts: document.accepts.map(v2Requirements),
  };
  if (Object.keys(document.extensions).length > 0) required.extensions = document.extensions;
  return required;
}

export function v2PaymentRequiredHeader(document: PaymentRequired): string {
  return encodeHeader(v2PaymentRequired(document));
}

/** Returns the decoded proof, or the reason the header cannot be one (the 402's `error`). */
export function decodeV2Proof(header: string): V2Proof | string {
  const decoded = decodeHeader(header);
  if (decoded === undefined) return 'invalid_payment: PAYMENT-SIGNATURE is not base64-encoded JSON';
  return v2ProofFromPayload(decoded, V2_PROOF_HEADER, '; send version 1 in X-PAYMENT');
}

/**
 * A v2 PaymentPayload object (what PAYMENT-SIGNATURE holds in base64, what the MCP transport's `_meta` holds as
 * is) as a proof, or the reason it is not one; `where` names what carried it in that reason.
 */
export function v2ProofFromPayload(value: unknown, where: string, otherVersions = ''): V2Proof | string {
  const parsed = paymentPayloadSchema.safeParse(value);
  if (!parsed.success) return `invalid_payment: ${where} must hold { x402Version, accepted, payload }`;
  const { x402Version, accepted, payload, extensions } = parsed.data;
  if (x402Version !== 2) {
    return `unsupported_x402_version: ${x402Version} (${where} carries x402Version 2${otherVersions})`;
  }
  return {
    proof: { scheme: accepted.scheme, network: accepted.network, payload, wire: 2, ...(extensions ? { extensions } : {}) },
    accepted: { scheme: accepted.scheme, amount: BigInt(accepted.amount), asset: accepted.asset, payTo: accepted.payTo },
    extensions: extensions ?? {},
  };
}

/**
 * The client's payment identifier (payment-identifier extension): undefined when it sent none, else the id,
 * or `{ invalid }` when it is not one (16-128 characters of A-Z a-z 0-9 _ -).
 */
export function paymentIdOf(extensions: Record<string, unknown>): string | { invalid: string } | undefined {
  const extension = extensions[PAYMENT_IDENTIFIER];
  if (extension === undefined || extension === null) return undefined;
  const info = (extension as { info?: { id?: unknown } }).info;
  const id = info?.id;
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || !isValidPaymentId(id)) {
    return { invalid: `extensions["${PAYMENT_IDENTIFIER}"].info.id must be 16 to 128 characters of A-Z, a-z, 0-9, _ and -` };
  }
  return id;
}

export function v2Receipt(receipt: SettlementReceipt): string {
  return encodeHeader(v2SettleResponse(receipt));
}

/** The v2 SettleResponse document (PAYMENT-RESPONSE's JSON, MCP's `_meta["x402/payment-response"]`). */
export function v2SettleResponse(receipt: SettlementReceipt): Record<string, unknown> {
  const response: Record<string, unknown> = {
    success: receipt.success,
    transaction: receipt.transaction,
    network: caip2Of(receipt.network),
    payer: receipt.payer,
  };
  const amount = receiptAmount(receipt);
  if (amount !== undefined) response.amount = amount;
  if (receipt.errorReason !== undefined) response.errorReason = receipt.errorReason;
  if (receipt.errorMessage !== undefined) response.errorMessage = receipt.errorMessage;
  if (receipt.extra) response.extra = receipt.extra;
  return response;
}
