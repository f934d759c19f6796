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
  /** certainly never settled: the payment itself is at fault (a simulation or the transaction reverted, it expired) */
  | { status: 'failed'; reason: string; payer?: string; transaction?: string }
  /** broadcast, but no confirmation in time: may still land; must be reconciled, never re-paid */
  | { status: 'unknown'; reason: string; payer: string; transaction: string }
  /**
   * not attempted: what settling needs (the chain's RPC, the ledger's nonces, the node's acceptance of our
   * transaction) failed before anything was sent. No verdict on the payment, whose authorization still stands:
   * it may be settled later (the reconciler does, for a payment whose result was already delivered).
   */
  | { status: 'unavailable'; reason: string; payer?: string };

/** A verification's refusal, as the local facilitators carry it beside their checked payloads. */
export interface Refused {
  ok: false;
  result: VerifyResult & { isValid: false };
}

/** The refusal for `invalidReason`, naming the payer when it is known. */
export const refused = (invalidReason: string, payer?: string): Refused => ({
  ok: false,
  result: payer === undefined ? { isValid: false, invalidReason } : { isValid: false, invalidReason, payer },
});

/** What settle() answers for a payment its verification refused: failed, naming the payer when known. */
export function failedSettlement({ invalidReason: reason, payer }: Refused['result']): SettleOutcome {
  return payer === undefined ? { status: 'failed', reason } : { status: 'failed', reason, payer };
}

/**
 * Verification could not be carried out (the chain's RPC or the remote facilitator failed): no verdict on the
 * payment. verify() throws it, and the gate answers 503 with Retry-After, never a 402 that would ask for a new payment.
 */
export class FacilitatorUnavailableError extends Error {
  override name = 'FacilitatorUnavailableError';
  constructor(what: string, cause?: unknown) {
    super(`${what}: the chain or facilitator could not be reached`, { cause });
  }
}

export interface Facilitator {
  /** extra fields for the requirement (Solana: { feePayer }) that only the facilitator knows */
  requirementExtra(): Promise<Record<string, unknown>>;
  /** A verdict on the payment; throws (FacilitatorUnavailableError) when none could be reached. */
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
