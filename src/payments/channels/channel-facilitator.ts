// What the channel gate and the claimer need of a facilitator for x402 `batch-settlement`: verify a deposit or
// voucher (with the escrow's state of the channel), and submit deposits, claims, settlements and refunds. It
// speaks the payment model and the scheme's own typed payloads; each adapter (the official facilitator scheme
// in-process, a remote facilitator's /verify and /settle) puts them on the x402 v2 wire itself, as every other
// facilitator does.
import type { PaymentRequirement } from '../../x402/model.ts';
import type { ChannelPayload, ChannelSubmission, OnChainChannel } from '../../x402/batch-settlement.ts';

export type { OnChainChannel } from '../../x402/batch-settlement.ts';

/** A channel payment or submission, and the v2 extensions the client sent with it (a Permit2 deposit's EIP-2612 permit). */
export interface ChannelProof<P = ChannelPayload> {
  payload: P;
  extensions?: Record<string, unknown>;
}

export type ChannelVerifyResult =
  | { isValid: true; payer: string; state: OnChainChannel }
  | { isValid: false; invalidReason: string; payer?: string };

export type ChannelSettleResult =
  /** `amount`: what the transaction moved as the facilitator reports it (a deposit's, a refund's, a settle's), when it does */
  | { success: true; transaction: string; amount?: bigint; state?: OnChainChannel }
  /** pending: broadcast, not confirmed (the transaction may still land) */
  | { success: false; errorReason: string; transaction: string; pending: boolean };

export interface ChannelFacilitator {
  /** the address that signs claims and refunds (the channel config's receiverAuthorizer) */
  readonly receiverAuthorizer: string;
  /** whether a Permit2 deposit may carry the payer's EIP-2612 permit for Permit2 (submitted with the deposit) */
  readonly sponsorsPermits: boolean;
  verify(proof: ChannelProof, requirement: PaymentRequirement): Promise<ChannelVerifyResult>;
  /** deposit, claim, settle or refund, by `proof.payload.type` */
  settle(proof: ChannelProof<ChannelSubmission>, requirement: PaymentRequirement): Promise<ChannelSettleResult>;
  /** the escrow's state of a channel, read now */
  readChannel(channelId: string): Promise<OnChainChannel>;
  /** what is claimed and not yet settled to `receiver` in `token`; undefined when this facilitator cannot tell */
  unsettled(receiver: string, token: string): Promise<bigint | undefined>;
  /** which of the escrow and its collectors have no code on this chain ([] when all do) */
  missingContracts(): Promise<string[]>;
}
