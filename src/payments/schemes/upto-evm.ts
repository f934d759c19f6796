// upto on EVM (x402 v2 only): a Permit2 PermitWitnessTransferFrom for at most the ceiling, spender the upto
// proxy, witness bound to payTo and our facilitator; the actual cost is settled after the work.
import { uptoPaymentKey, uptoPermit2PayloadSchema } from '../../x402/upto.ts';
import type { PaymentScheme } from './scheme.ts';
import { INVALID_NETWORK } from '../reasons.ts';
import { INVALID_PERMIT2_RECIPIENT_MISMATCH, PERMIT2_AMOUNT_MISMATCH } from '../facilitators/evm/upto-reasons.ts';

export const uptoEvm: PaymentScheme = {
  scheme: 'upto',
  family: 'evm',
  identify(network, requirement, proof) {
    if (network.family !== 'evm') return INVALID_NETWORK;
    if (proof.wire !== 2) return 'unsupported_scheme: upto exists only in x402 version 2 (PAYMENT-SIGNATURE)';
    const parsed = uptoPermit2PayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return 'invalid_payload: not an upto Permit2 authorization';
    const { permit2Authorization: auth } = parsed.data;
    const key = uptoPaymentKey(network.chainId, parsed.data);
    const payer = auth.from;
    const validUntil = Number(auth.deadline);
    if (auth.witness.to.toLowerCase() !== requirement.payTo.toLowerCase()) return { key, payer, validUntil, mismatch: INVALID_PERMIT2_RECIPIENT_MISMATCH };
    if (BigInt(auth.permitted.amount) !== requirement.amount) return { key, payer, validUntil, mismatch: PERMIT2_AMOUNT_MISMATCH };
    return { key, payer, validUntil };
  },
};
