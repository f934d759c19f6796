// What the channel gate and the claimer need of a facilitator for x402 `batch-settlement`: verify a deposit or
// voucher (with the escrow's state of the channel), and submit deposits, claims, settlements and refunds.
// Payloads and requirements travel in the x402 v2 wire shapes, which both the official facilitator scheme
// (local) and a remote facilitator's /verify and /settle take as they are.
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

/** The escrow's fields of one channel. */
export interface OnChainChannel {
  balance: bigint;
  totalClaimed: bigint;
  withdrawRequestedAt: number;
  refundNonce: bigint;
}

export type ChannelVerifyResult =
  | { isValid: true; payer: string; state: OnChainChannel }
  | { isValid: false; invalidReason: string; payer?: string };

export type ChannelSettleResult =
  | { success: true; transaction: string; amount: string; state?: OnChainChannel }
  /** pending: broadcast, not confirmed (the transaction may still land) */
  | { success: false; errorReason: string; transaction: string; pending: boolean };

export interface ChannelFacilitator {
  /** the address that signs claims and refunds (the channel config's receiverAuthorizer) */
  readonly receiverAuthorizer: string;
  /** whether a Permit2 deposit may carry the payer's EIP-2612 permit for Permit2 (submitted with the deposit) */
  readonly sponsorsPermits: boolean;
  verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<ChannelVerifyResult>;
  /** deposit, claim, settle or refund, by `payment.payload.type` */
  settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<ChannelSettleResult>;
  /** the escrow's state of a channel, read now */
  readChannel(channelId: string): Promise<OnChainChannel>;
  /** what is claimed and not yet settled to `receiver` in `token`; undefined when this facilitator cannot tell */
  unsettled(receiver: string, token: string): Promise<bigint | undefined>;
  /** which of the escrow and its collectors have no code on this chain ([] when all do) */
  missingContracts(): Promise<string[]>;
}

/** The channel snapshot of a verify response's `extra` or a settle response's `extra.channelState`. */
export function stateFromWire(value: unknown): OnChainChannel | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const uint = (x: unknown) => (typeof x === 'string' && /^\d{1,39}$/.test(x) ? BigInt(x) : typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? BigInt(x) : undefined);
  const balance = uint(v.balance);
  const totalClaimed = uint(v.totalClaimed);
  const withdrawRequestedAt = uint(v.withdrawRequestedAt ?? 0);
  const refundNonce = uint(v.refundNonce ?? '0');
  if (balance === undefined || totalClaimed === undefined || withdrawRequestedAt === undefined || refundNonce === undefined) return undefined;
  return { balance, totalClaimed, withdrawRequestedAt: Number(withdrawRequestedAt), refundNonce };
}
