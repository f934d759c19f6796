// One interface for every way of verifying and settling an x402 payment:
// local EVM (our RPC + settlement key), local Solana (our RPC + fee payer), or a remote HTTP facilitator.
// They work on the internal payment model, whichever x402 version the proof came on.
import type { PaymentProof, PaymentRequirement } from '../x402/model.ts';

export type VerifyResult =
  | { isValid: true; payer: string }
  | { isValid: false; invalidReason: string; payer?: string };

export type SettleOutcome =
  /** confirmed on-chain */
  | { status: 'settled'; transaction: string; payer: string }
  /** certainly not settled (rejected before broadcast, or reverted) */
  | { status: 'failed'; reason: string; payer?: string; transaction?: string }
  /** broadcast, but no confirmation in time: may still land; must be reconciled, never re-paid */
  | { status: 'unknown'; reason: string; payer: string; transaction: string };

export interface Facilitator {
  /** extra fields for the requirement (Solana: { feePayer }) that only the facilitator knows */
  requirementExtra(): Promise<Record<string, unknown>>;
  verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<VerifyResult>;
  /**
   * Settles `amount`: the requirement's for exact; for upto the actual cost, at most the requirement's (the
   * ceiling the payer authorized); an upto zero moves nothing ('settled' with transaction '').
   */
  settle(proof: PaymentProof, requirement: PaymentRequirement, amount?: bigint): Promise<SettleOutcome>;
  /**
   * For reconciliation of an 'unknown' settlement: asks the chain what became of it.
   * 'unknown' again means the chain cannot tell yet.
   */
  checkSettlement(
    proof: PaymentProof,
    requirement: PaymentRequirement,
    transaction: string,
  ): Promise<SettleOutcome>;
  /**
   * What would make payments to `payTo` fail on this network as it is now (an account that does not exist,
   * no gas), each said so an operator can fix it; empty when ready. Local facilitators only.
   */
  readinessProblems?(payTo: string): Promise<string[]>;
}
