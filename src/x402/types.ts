// x402 version 1 wire types. The zod schemas validate what clients send; the types describe what we send.
import { z } from 'zod';

export const X402_VERSION = 1;

export interface PaymentRequirements {
  scheme: string;
  network: string;
  /** integer string in the asset's atomic units */
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  outputSchema: {
    input: {
      type: 'http';
      method: 'POST';
      discoverable: boolean;
      bodyType?: 'json';
      bodyFields?: Record<string, unknown>;
    };
    output?: Record<string, unknown>;
  };
  extra: Record<string, unknown>;
}

export interface PaymentRequiredBody {
  x402Version: number;
  error: string;
  accepts: PaymentRequirements[];
}

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address');
const uintString = z.string().regex(/^\d{1,78}$/, 'an unsigned integer string');

export const evmExactPayloadSchema = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'a hex signature'),
  authorization: z.object({
    from: evmAddress,
    to: evmAddress,
    value: uintString,
    validAfter: uintString,
    validBefore: uintString,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 32-byte hex nonce'),
  }),
});
export type EvmExactPayload = z.infer<typeof evmExactPayloadSchema>;

export const svmExactPayloadSchema = z.object({
  transaction: z.string().min(1).max(4096),
});
export type SvmExactPayload = z.infer<typeof svmExactPayloadSchema>;

/** The decoded X-PAYMENT header. The payload is checked per chain family once the network is known. */
export const paymentPayloadSchema = z.object({
  x402Version: z.number().int(),
  scheme: z.string(),
  network: z.string(),
  payload: z.record(z.string(), z.unknown()),
});
export type PaymentPayload = z.infer<typeof paymentPayloadSchema>;

/** The X-PAYMENT-RESPONSE header, base64 JSON. */
export interface SettlementResponse {
  success: boolean;
  transaction: string;
  network: string;
  payer: string;
  errorReason?: string;
  errorMessage?: string;
}
