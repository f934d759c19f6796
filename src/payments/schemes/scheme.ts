// A payment scheme on one chain family (exact on EVM, exact on Solana, and later upto...): how a proof of it
// is identified (its one-use key) and checked against the server's requirement before the ledger is touched.
// The gate looks schemes up by (scheme, family), so a new one is registered here without changing gate logic.
import type { ChainFamily, Network } from '../../x402/networks.ts';
import type { PaymentProof, PaymentRequirement } from '../../x402/model.ts';

export interface ProofIdentity {
  /** the one-use key: derived from the authorization/transaction itself, never from the wire */
  key: string;
  /** known before verification where the proof says it in the clear ('' otherwise) */
  payer: string;
  /** why this proof cannot pay this requirement, when that is visible without the chain */
  mismatch?: string;
  /** when the proof stops being settleable (unix seconds), where the proof says so (EVM validBefore, Permit2 deadline) */
  validUntil?: number;
}

export interface PaymentScheme {
  scheme: string;
  family: ChainFamily;
  /** the identity of a proof, or why its payload is not one of this scheme */
  identify(network: Network, requirement: PaymentRequirement, proof: PaymentProof): ProofIdentity | string;
}
