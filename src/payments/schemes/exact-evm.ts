// exact on EVM: an EIP-3009 transferWithAuthorization for exactly the price, to payTo.
import { evmExactPayloadSchema } from '../../x402/types.ts';
import { evmPaymentKey } from '../../x402/payment-key.ts';
import type { PaymentScheme } from './scheme.ts';
import { INVALID_NETWORK } from '../reasons.ts';
import { INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALUE, INVALID_EXACT_EVM_PAYLOAD_RECIPIENT_MISMATCH } from '../facilitators/evm/exact-reasons.ts';

export const exactEvm: PaymentScheme = {
  scheme: 'exact',
  family: 'evm',
  identify(network, requirement, proof) {
    if (network.family !== 'evm') return INVALID_NETWORK;
    const parsed = evmExactPayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return 'invalid_payload: not an EIP-3009 authorization';
    const { authorization } = parsed.data;
    const key = evmPaymentKey(network.chainId, requirement.asset, parsed.data);
    const payer = authorization.from;
    const validUntil = Number(authorization.validBefore);
    if (authorization.to.toLowerCase() !== requirement.payTo.toLowerCase()) {
      return { key, payer, validUntil, mismatch: INVALID_EXACT_EVM_PAYLOAD_RECIPIENT_MISMATCH };
    }
    if (BigInt(authorization.value) !== requirement.amount) {
      return { key, payer, validUntil, mismatch: INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALUE };
    }
    return { key, payer, validUntil };
  },
};
