// The gateway's own receiver authorizer, for payment channels through a remote facilitator that is not given
// that role (receiver authorization kept, not delegated): the key signs the escrow's ClaimBatch and Refund typed
// data, and the signatures ride in the claim and refund payloads the facilitator submits, as the spec's
// `claimAuthorizerSignature` and `refundAuthorizerSignature` (what @x402/evm's server scheme sends when it is
// configured with a receiverAuthorizerSigner).
import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { claimBatchTypes, refundTypes } from '@x402/evm';
import { channelIdOf, escrowDomain, type ChannelSubmission, type VoucherClaim } from '../../x402/batch-settlement.ts';

async function signClaims(account: PrivateKeyAccount, claims: readonly VoucherClaim[], chainId: number): Promise<Hex> {
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
 * `submission` with the receiver authorizer's signatures a claim or refund needs (others as they are): a claim's
 * batch; a refund's (channel, nonce, amount) and the claim it carries, if any.
 */
export async function withReceiverSignatures(account: PrivateKeyAccount, chainId: number, submission: ChannelSubmission): Promise<ChannelSubmission & Record<string, unknown>> {
  if (submission.type === 'claim') return { ...submission, claimAuthorizerSignature: await signClaims(account, submission.claims, chainId) };
  if (submission.type !== 'refund') return submission;
  const refundAuthorizerSignature = await account.signTypedData({
    domain: escrowDomain(chainId),
    types: refundTypes,
    primaryType: 'Refund',
    message: { channelId: submission.voucher.channelId as Hex, nonce: BigInt(submission.refundNonce), amount: BigInt(submission.amount) },
  });
  return {
    ...submission,
    refundAuthorizerSignature,
    ...(submission.claims.length > 0 ? { claimAuthorizerSignature: await signClaims(account, submission.claims, chainId) } : {}),
  };
}
