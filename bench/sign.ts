// Signs x402 "exact" EVM proofs exactly as x402-fetch 1.x does: parse the 402 `accepts` with
// PaymentRequirementsSchema, pick with selectPaymentRequirements(…, 'exact'), then createPaymentHeader
// (a fresh random EIP-3009 nonce and an EIP-712 signature by viem per call).
import { createPaymentHeader, selectPaymentRequirements } from 'x402/client';
import { PaymentRequirementsSchema } from 'x402/types';
import type { PrivateKeyAccount } from 'viem/accounts';

export interface PaymentRequired {
  x402Version: number;
  accepts: unknown[];
}

export function signProof(account: PrivateKeyAccount, required: PaymentRequired): Promise<string> {
  const parsed = required.accepts.map((x) => PaymentRequirementsSchema.parse(x));
  const selected = selectPaymentRequirements(parsed, undefined, 'exact');
  return createPaymentHeader(account, required.x402Version, selected);
}

/** The headers x402-fetch adds on its paid retry. */
export function paidHeaders(proof: string): Record<string, string> {
  return { 'X-PAYMENT': proof, 'Access-Control-Expose-Headers': 'X-PAYMENT-RESPONSE' };
}
