// The gateway's own receiver authorizer, for payment channels through a remote facilitator that is not given
// that role (receiver authorization kept, not delegated): the key signs the escrow's ClaimBatch and Refund typed
// data, and the signatures ride in the claim and refund payloads the facilitator submits, as the spec's
// `claimAuthorizerSignature` and `refundAuthorizerSignature` (what @x402/evm's server scheme sends when it is
// configured with a receiverAuthorizerSigner).
import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { claimBatchTypes, refundTypes } from '@x402/evm';
import { channelIdOf, escrowDomain, type ChannelConfig } from '../../x402/batch-settlement.ts';

/** A claim entry as claim and refund payloads carry it. */
interface WireClaim {
  voucher: { channel: ChannelConfig; maxClaimableAmount: string };
  totalClaimed: string;
}

async function signClaims(account: PrivateKeyAccount, claims: readonly WireClaim[], chainId: number): Promise<Hex> {
  return account.signTypedData({
    domain: escrowDomain(chainId),
    types: claimBatchTypes,
    primaryType: 'ClaimBatch',
    message: {
      claims: claims.map((claim) => ({
        channelId: channelIdOf(claim.voucher.channel, chainId),
        maxClaimableAmount: BigInt(claim.voucher.maxClaimableAmount),
        totalClaimed: BigInt(claim.totalClaimed),
      })),
    },
  });
}

/**
 * `payload` with the receiver authorizer's signatures a claim or refund needs (other payloads as they are):
 * a claim's batch; a refund's (channel, nonce, amount) and the claim it carries, if any.
 */
export async function withReceiverSignatures(account: PrivateKeyAccount, chainId: number, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
  const claims = (payload.claims ?? []) as WireClaim[];
  if (payload.type === 'claim') return { ...payload, claimAuthorizerSignature: await signClaims(account, claims, chainId) };
  if (payload.type !== 'refund') return payload;
  const voucher = payload.voucher as { channelId: Hex };
  const refundAuthorizerSignature = await account.signTypedData({
    domain: escrowDomain(chainId),
    types: refundTypes,
    primaryType: 'Refund',
    message: { channelId: voucher.channelId, nonce: BigInt(String(payload.refundNonce)), amount: BigInt(String(payload.amount)) },
  });
  return {
    ...payload,
    refundAuthorizerSignature,
    ...(claims.length > 0 ? { claimAuthorizerSignature: await signClaims(account, claims, chainId) } : {}),
  };
}
