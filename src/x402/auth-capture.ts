// The x402 `auth-capture` scheme on EVM (x402 v2 only), as @x402/evm 2.27.0's client (AuthCaptureEvmScheme) signs
// it: an ERC-3009 ReceiveWithAuthorization of the whole price to Commerce Payments' ERC-3009 token collector,
// whose nonce is the hash of the payment's terms (its PaymentInfo: operator, receiver, token, amount, expiries,
// fee bounds, a salt) without the payer. The operator named in those terms takes the payment through the
// AuthCaptureEscrow (authorize, then capture; or both at once, `charge`). We offer the v1.0 deployment: the
// escrow's code at its address is Coinbase's commerce-payments as published (contracts/commerce-payments/).
import { z } from 'zod';
import { encodeAbiParameters, keccak256, toHex, zeroAddress, type Address, type Hex } from 'viem';
import { AUTH_CAPTURE_ESCROW_V1_0_ADDRESS, AUTH_CAPTURE_SCHEME as OFFICIAL_AUTH_CAPTURE_SCHEME, EIP3009_TOKEN_COLLECTOR_V1_0_ADDRESS } from '@x402/evm';
import { evmExactPayloadSchema } from './types.ts';

export const AUTH_CAPTURE_SCHEME: 'auth-capture' = OFFICIAL_AUTH_CAPTURE_SCHEME;

/** Where the escrow and its ERC-3009 collector are (Commerce Payments v1.0, the same address on every chain). */
export const AUTH_CAPTURE_ESCROW: Address = AUTH_CAPTURE_ESCROW_V1_0_ADDRESS;
export const AUTH_CAPTURE_EIP3009_COLLECTOR: Address = EIP3009_TOKEN_COLLECTOR_V1_0_ADDRESS;

/** uint48's largest value: the escrow's timestamps are uint48. */
export const MAX_UINT48 = 2 ** 48 - 1;

/**
 * The terms every auth-capture requirement of ours carries in `extra` (beside the token's EIP-712 name and
 * version). The gateway charges (authorizes and captures at once) after the work, so nothing is ever left
 * authorized and uncaptured: the capture deadline does not bind, and refunds stay open. No fee.
 */
export function authCaptureTerms(operator: Address): AuthCaptureTerms {
  return {
    captureAuthorizer: operator,
    feeRecipient: zeroAddress,
    captureDeadline: MAX_UINT48,
    refundDeadline: MAX_UINT48,
    minFeeBps: 0,
    maxFeeBps: 0,
    authCaptureEscrow: AUTH_CAPTURE_ESCROW,
  };
}

export interface AuthCaptureTerms {
  captureAuthorizer: Address;
  feeRecipient: Address;
  captureDeadline: number;
  refundDeadline: number;
  minFeeBps: number;
  maxFeeBps: number;
  authCaptureEscrow: Address;
}

/** The payload: the ERC-3009 authorization and its signature (exact's shape), and the salt of the payment's terms. */
export const authCapturePayloadSchema = evmExactPayloadSchema.extend({
  salt: z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, 'a 32-byte hex salt'),
  saltNonce: z.string().optional(),
});
export type AuthCapturePayload = z.infer<typeof authCapturePayloadSchema>;

/** The escrow's PaymentInfo, as its functions take it. */
export interface PaymentInfo {
  operator: Address;
  payer: Address;
  receiver: Address;
  token: Address;
  maxAmount: bigint;
  preApprovalExpiry: number;
  authorizationExpiry: number;
  refundExpiry: number;
  minFeeBps: number;
  maxFeeBps: number;
  feeReceiver: Address;
  salt: bigint;
}

/** The PaymentInfo the payer signed for, rebuilt from our own terms and the payload (as the client built it). */
export function paymentInfoOf(terms: AuthCaptureTerms, requirement: { payTo: string; asset: string; amount: bigint }, payload: AuthCapturePayload): PaymentInfo {
  return {
    operator: terms.captureAuthorizer,
    payer: payload.authorization.from as Address,
    receiver: requirement.payTo as Address,
    token: requirement.asset as Address,
    maxAmount: requirement.amount,
    preApprovalExpiry: Number(payload.authorization.validBefore),
    authorizationExpiry: terms.captureDeadline,
    refundExpiry: terms.refundDeadline,
    minFeeBps: terms.minFeeBps,
    maxFeeBps: terms.maxFeeBps,
    feeReceiver: terms.feeRecipient,
    salt: BigInt(payload.salt),
  };
}

const PAYMENT_INFO_TYPEHASH = keccak256(
  toHex(
    'PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps,address feeReceiver,uint256 salt)',
  ),
);

/** AuthCaptureEscrow.getHash: the payment's id on this chain and escrow; with payer 0, the ERC-3009 nonce the payer signed. */
export function paymentInfoHash(chainId: number, info: PaymentInfo, escrow: Address = AUTH_CAPTURE_ESCROW): Hex {
  const inner = keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint120' },
        { type: 'uint48' },
        { type: 'uint48' },
        { type: 'uint48' },
        { type: 'uint16' },
        { type: 'uint16' },
        { type: 'address' },
        { type: 'uint256' },
      ],
      [
        PAYMENT_INFO_TYPEHASH,
        info.operator,
        info.payer,
        info.receiver,
        info.token,
        info.maxAmount,
        info.preApprovalExpiry,
        info.authorizationExpiry,
        info.refundExpiry,
        info.minFeeBps,
        info.maxFeeBps,
        info.feeReceiver,
        info.salt,
      ],
    ),
  );
  return keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }], [BigInt(chainId), escrow, inner]));
}

/** The ERC-3009 nonce the payer signed: the terms' hash with the payer left out. */
export const payerAgnosticHash = (chainId: number, info: PaymentInfo): Hex => paymentInfoHash(chainId, { ...info, payer: zeroAddress });

/** The escrow's functions and errors the facilitator uses. */
export const authCaptureEscrowAbi = [
  {
    type: 'function',
    name: 'charge',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'paymentInfo', type: 'tuple', components: paymentInfoComponents() },
      { name: 'amount', type: 'uint256' },
      { name: 'tokenCollector', type: 'address' },
      { name: 'collectorData', type: 'bytes' },
      { name: 'feeBps', type: 'uint16' },
      { name: 'feeReceiver', type: 'address' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'paymentState',
    stateMutability: 'view',
    inputs: [{ name: 'paymentInfoHash', type: 'bytes32' }],
    outputs: [
      { name: 'hasCollectedPayment', type: 'bool' },
      { name: 'capturableAmount', type: 'uint120' },
      { name: 'refundableAmount', type: 'uint120' },
    ],
  },
  { type: 'error', name: 'PaymentAlreadyCollected', inputs: [{ name: 'paymentInfoHash', type: 'bytes32' }] },
  { type: 'error', name: 'AfterPreApprovalExpiry', inputs: [{ name: 'timestamp', type: 'uint48' }, { name: 'expiry', type: 'uint48' }] },
  { type: 'error', name: 'ExceedsMaxAmount', inputs: [{ name: 'amount', type: 'uint256' }, { name: 'maxAmount', type: 'uint256' }] },
  { type: 'error', name: 'InvalidSender', inputs: [{ name: 'sender', type: 'address' }, { name: 'expected', type: 'address' }] },
  { type: 'error', name: 'TokenCollectionFailed', inputs: [] },
] as const;

function paymentInfoComponents() {
  return [
    { name: 'operator', type: 'address' },
    { name: 'payer', type: 'address' },
    { name: 'receiver', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'maxAmount', type: 'uint120' },
    { name: 'preApprovalExpiry', type: 'uint48' },
    { name: 'authorizationExpiry', type: 'uint48' },
    { name: 'refundExpiry', type: 'uint48' },
    { name: 'minFeeBps', type: 'uint16' },
    { name: 'maxFeeBps', type: 'uint16' },
    { name: 'feeReceiver', type: 'address' },
    { name: 'salt', type: 'uint256' },
  ] as const;
}
