// The x402 v1 wire: X-PAYMENT in, the JSON 402 body and X-PAYMENT-RESPONSE out.
// Translates between those documents and the internal payment model (src/x402/model.ts).
import { decodeHeader, encodeHeader } from '../encoding.ts';
import { buildRequirement } from '../requirements.ts';
import { paymentPayloadSchema, type PaymentRequiredBody, type PaymentRequirements, type SettlementResponse } from '../types.ts';
import type { DecodedProof, PaymentRequirement, SettlementReceipt } from '../model.ts';

export const V1_PROOF_HEADER = 'X-PAYMENT';
export const V1_RECEIPT_HEADER = 'X-PAYMENT-RESPONSE';

/** what v1 puts in each requirement and v2 puts once in `resource` */
export interface RouteDescription {
  /** absolute URL of the endpoint */
  url: string;
  description: string;
  /** JSON Schema of the body, advertised in v1 outputSchema */
  bodyFields: Record<string, unknown>;
}

/** Returns the proof, or the reason the header cannot be one (the 402's `error`). */
export function decodeV1Proof(header: string): DecodedProof | string {
  const decoded = decodeHeader(header);
  if (decoded === undefined) return 'invalid_payment: X-PAYMENT is not base64-encoded JSON';
  const parsed = paymentPayloadSchema.safeParse(decoded);
  if (!parsed.success) return 'invalid_payment: X-PAYMENT must hold { x402Version, scheme, network, payload }';
  if (parsed.data.x402Version !== 1) {
    return `unsupported_x402_version: ${parsed.data.x402Version} (X-PAYMENT carries x402Version 1; send version 2 in PAYMENT-SIGNATURE)`;
  }
  return { scheme: parsed.data.scheme, network: parsed.data.network, payload: parsed.data.payload, wire: 1 };
}

export function v1Requirement(requirement: PaymentRequirement, route: RouteDescription): PaymentRequirements {
  return buildRequirement({
    scheme: requirement.scheme,
    network: requirement.network,
    amount: requirement.amount,
    resource: route.url,
    description: route.description,
    payTo: requirement.payTo,
    asset: requirement.asset,
    maxTimeoutSeconds: requirement.maxTimeoutSeconds,
    extra: requirement.extra,
    bodyFields: route.bodyFields,
  });
}

/** The v1 402 body, serialised (spec section 2.7: unchanged byte for byte). */
export function v1PaymentRequiredBody(error: string, accepts: PaymentRequirement[], route: RouteDescription): string {
  const document: PaymentRequiredBody = { x402Version: 1, error, accepts: accepts.map((r) => v1Requirement(r, route)) };
  return JSON.stringify(document);
}

export function v1Receipt(receipt: SettlementReceipt): string {
  const response: SettlementResponse = {
    success: receipt.success,
    transaction: receipt.transaction,
    network: receipt.network,
    payer: receipt.payer,
  };
  if (receipt.errorReason !== undefined) response.errorReason = receipt.errorReason;
  if (receipt.errorMessage !== undefined) response.errorMessage = receipt.errorMessage;
  return encodeHeader(response);
}
