// Who may learn anything about a payment already in the ledger by presenting its proof again. A payment's key
// is public (EVM: payer + nonce, shown by the chain and the receipt route), so knowing it proves nothing:
// only the very proof that was accepted (its stored payload, signature included, on either wire), still
// within its validity, replays the result or hears the payment's state. Anything else is answered as an
// unknown proof would be (see PaymentGate.answerAsUnknown): no result and no hint that the key exists.
import { canonicalJson } from '../lib/canonical-json.ts';
import type { PaymentRecord } from '../store/ledger.ts';
import { proofFromStored, requirementFromStored, type PaymentProof } from '../x402/model.ts';

/** Whether `proof` is the proof the ledger stored for this payment: scheme, network and payload, byte for byte. */
export function isAcceptedProof(existing: PaymentRecord, proof: PaymentProof): boolean {
  const stored = proofFromStored(existing.payload);
  return (
    stored !== undefined &&
    stored.scheme === proof.scheme &&
    stored.network === proof.network &&
    canonicalJson(stored.payload) === canonicalJson(proof.payload)
  );
}

/**
 * Whether the proof may still be presented: an EIP-3009 authorization until its validBefore; any other proof
 * (a Solana transaction, whose blockhash lives about a minute) for the requirement's maxTimeoutSeconds after
 * the payment was first reserved.
 */
export function withinValidity(existing: PaymentRecord, proof: PaymentProof, now = Date.now()): boolean {
  const authorization = proof.payload.authorization as { validBefore?: unknown } | undefined;
  const validBefore = authorization?.validBefore;
  if (typeof validBefore === 'string' && /^\d{1,20}$/.test(validBefore)) return BigInt(validBefore) * 1000n > BigInt(now);
  const seconds = requirementFromStored(existing.requirements)?.maxTimeoutSeconds ?? 0;
  return Date.parse(existing.createdAt) + seconds * 1000 > now;
}
