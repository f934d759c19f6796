// exact on Solana: a partially signed SPL transfer the facilitator co-signs as fee payer.
// Recipient and amount are inside the transaction; the facilitator checks them.
import { svmExactPayloadSchema } from '../../x402/types.ts';
import { svmPaymentKey } from '../../x402/payment-key.ts';
import type { PaymentScheme } from './scheme.ts';

export const exactSvm: PaymentScheme = {
  scheme: 'exact',
  family: 'svm',
  identify(_network, _requirement, proof) {
    const parsed = svmExactPayloadSchema.safeParse(proof.payload);
    const key = parsed.success ? svmPaymentKey(parsed.data) : undefined;
    if (!key) return 'invalid_payload: not a base64 Solana transaction';
    return { key, payer: '' };
  },
};
