// upto on EVM (x402 v2 only): a Permit2 PermitWitnessTransferFrom for at most the ceiling, spender the upto
// proxy, witness bound to payTo and our facilitator; the actual cost is settled after the work.
import { uptoPaymentKey, uptoPermit2PayloadSchema } from '../../x402/upto.ts';
import type { PaymentScheme } from './scheme.ts';

export const uptoEvm: PaymentScheme = {
  scheme: 'upto',
  family: 'evm',
  identify(network, requirement, proof) {
    if (network.family !== 'evm') return 'invalid_network';
    if (proof.wire !== 2) return 'unsupported_scheme: upto exists only in x402 version 2 (PAYMENT-SIGNATURE)';
    const parsed = uptoPermit2PayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return 'invalid_payload: not an upto Permit2 authorization';
    const { permit2Authorization: auth } = parsed.data;
    const key = uptoPaymentKey(network.chainId, parsed.data);
    const payer = auth.from;
    const validUntil = Number(auth.deadline);
    if (auth.witness.to.toLowerCase() !== requirement.payTo.toLowerCase()) return { key, payer, validUntil, mismatch: 'invalid_permit2_recipient_mismatch' };
    if (BigInt(auth.permitted.amount) !== requirement.amount) return { key, payer, validUntil, mismatch: 'permit2_amount_mismatch' };
    return { key, payer, validUntil };
  },
};
