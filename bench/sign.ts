// Signs x402 "exact" proofs the way the official clients do.
// EVM, as x402-fetch 1.x: parse the 402 `accepts` with PaymentRequirementsSchema, pick with
// selectPaymentRequirements(…, 'exact'), then createPaymentHeader (a fresh random EIP-3009 nonce and an
// EIP-712 signature by viem per call).
// Solana, as @x402/fetch 2.x with @x402/svm's v1 scheme (ExactSvmSchemeV1 registered for the network):
// x402HTTPClient.createPaymentPayload (a transfer-checked transaction with a random memo, the latest
// blockhash read from the RPC, partially signed by the buyer), then encodePaymentSignatureHeader. The
// blockhash expires ~60 s later (150 blocks), so such proofs are signed shortly before they are used.
import { createPaymentHeader, selectPaymentRequirements } from 'x402/client';
import { PaymentRequirementsSchema } from 'x402/types';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import type { KeyPairSigner } from '@solana/kit';
import type { PrivateKeyAccount } from 'viem/accounts';

export interface PaymentRequired {
  x402Version: number;
  accepts: unknown[];
}

export function signProof(account: PrivateKeyAccount, required: PaymentRequired): Promise<string> {
  const parsed = required.accepts.map((x) => PaymentRequirementsSchema.parse(x));
  const selected = selectPaymentRequirements(parsed, undefined, 'exact');
  return createPaymentHeader(account, required.x402Version, selected);
}

/** A Solana signer for one network and RPC; returns the X-PAYMENT header value for a 402 body. */
export function solanaProofSigner(buyer: KeyPairSigner, network: string, rpcUrl: string): (required: PaymentRequired) => Promise<string> {
  const http = new x402HTTPClient(new x402Client().registerV1(network, new ExactSvmSchemeV1(buyer, { rpcUrl })));
  return async (required) => {
    const headers = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required as Parameters<typeof http.createPaymentPayload>[0]));
    const proof = headers['X-PAYMENT'];
    if (!proof) throw new Error(`the x402 client produced no X-PAYMENT header (${Object.keys(headers).join(', ')})`);
    return proof;
  };
}

/** The headers x402-fetch adds on its paid retry. */
export function paidHeaders(proof: string): Record<string, string> {
  return { 'X-PAYMENT': proof, 'Access-Control-Expose-Headers': 'X-PAYMENT-RESPONSE' };
}
