// Pays with the official @x402/evm `upto` client (the scheme object @x402/fetch would use), so tests see
// exactly the payload, signatures and gas-sponsoring extensions a real buyer sends.
import { createPublicClient, http, type Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { toClientEvmSigner } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import type { PaymentRequirements } from '@x402/core/types';

export interface UptoOffer {
  caip2: string;
  asset: Address;
  payTo: Address;
  ceiling: bigint;
  facilitatorAddress: Address;
  eip712: { name: string; version: string };
  maxTimeoutSeconds?: number;
}

export function uptoRequirements(offer: UptoOffer): PaymentRequirements {
  return {
    scheme: 'upto',
    network: offer.caip2 as PaymentRequirements['network'],
    asset: offer.asset,
    amount: offer.ceiling.toString(),
    payTo: offer.payTo,
    maxTimeoutSeconds: offer.maxTimeoutSeconds ?? 120,
    extra: { ...offer.eip712, facilitatorAddress: offer.facilitatorAddress, assetTransferMethod: 'permit2' },
  };
}

/** The client's payment for `offer`; `extensions` are the 402's declarations (gas sponsoring). */
export async function signUptoPayment(
  buyer: PrivateKeyAccount,
  rpcUrl: string,
  offer: UptoOffer,
  extensions?: Record<string, unknown>,
): Promise<{ payload: Record<string, unknown>; extensions?: Record<string, unknown>; requirements: PaymentRequirements }> {
  const publicClient = createPublicClient({ transport: http(rpcUrl) });
  const signer = toClientEvmSigner(buyer, publicClient);
  const requirements = uptoRequirements(offer);
  const result = await new UptoEvmScheme(signer, { rpcUrl }).createPaymentPayload(
    2,
    requirements,
    extensions ? { extensions } : undefined,
  );
  return { payload: result.payload, extensions: result.extensions, requirements };
}
