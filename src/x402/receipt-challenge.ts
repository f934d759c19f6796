// The text a payer signs to read back the result of its own payment (GET /api/v1/payments/:id).
// Everything in a settled proof is public on-chain, so knowing a transaction hash or payment key proves
// nothing; a fresh signature by the payer's own key does. Client and server build the same text here.

/** how far a signed timestamp may be from the server's clock, either way */
export const RECEIPT_PROOF_MAX_SKEW_SECONDS = 300;

export function receiptChallenge(paymentId: string, timestamp: number): string {
  return `x402-ai-gateway: show the result of payment ${paymentId} to its payer (timestamp ${timestamp})`;
}
