// auth-capture on EVM (x402 v2 only): an ERC-3009 ReceiveWithAuthorization of exactly the price to the escrow's
// token collector, its nonce the hash of our terms (src/x402/auth-capture.ts). Its one-use key is exact's: the
// token's (payer, nonce), which one authorization of either scheme can spend only once.
import { AUTH_CAPTURE_EIP3009_COLLECTOR, AUTH_CAPTURE_SCHEME, authCapturePayloadSchema } from '../../x402/auth-capture.ts';
import { evmPaymentKey } from '../../x402/payment-key.ts';
import type { PaymentScheme } from './scheme.ts';
import { INVALID_NETWORK } from '../reasons.ts';
import { INVALID_AUTH_CAPTURE_COLLECTOR, INVALID_AUTH_CAPTURE_VALUE } from '../facilitators/evm/auth-capture-reasons.ts';

export const authCaptureEvm: PaymentScheme = {
  scheme: AUTH_CAPTURE_SCHEME,
  family: 'evm',
  identify(network, requirement, proof) {
    if (network.family !== 'evm') return INVALID_NETWORK;
    if (proof.wire !== 2) return 'unsupported_scheme: auth-capture exists only in x402 version 2 (PAYMENT-SIGNATURE)';
    const parsed = authCapturePayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return 'invalid_payload: not an auth-capture ERC-3009 authorization';
    const { authorization } = parsed.data;
    const key = evmPaymentKey(network.chainId, requirement.asset, parsed.data);
    const payer = authorization.from;
    const validUntil = Number(authorization.validBefore);
    if (authorization.to.toLowerCase() !== AUTH_CAPTURE_EIP3009_COLLECTOR.toLowerCase()) return { key, payer, validUntil, mismatch: INVALID_AUTH_CAPTURE_COLLECTOR };
    if (BigInt(authorization.value) !== requirement.amount) return { key, payer, validUntil, mismatch: INVALID_AUTH_CAPTURE_VALUE };
    return { key, payer, validUntil };
  },
};
