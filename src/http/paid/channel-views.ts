// How a payment channel (x402 batch-settlement) is shown: by /api/v1/payments/:id (its channel id) and the
// operator's /api/v1/admin/channels. Every amount is an exact decimal string of atomic units. Shown to anyone:
// the escrow already shows the same on chain; the latest voucher's signature is not shown.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import type { ChannelRecord } from '../../store/channel-store.ts';

export function publicChannel(record: ChannelRecord): Record<string, unknown> {
  return {
    channelId: record.channelId,
    scheme: 'batch-settlement',
    network: record.network,
    payer: record.config.payer,
    payTo: record.config.receiver,
    asset: record.config.token,
    withdrawDelay: record.config.withdrawDelay,
    /** deposits this server submitted */
    deposited: record.deposited.toString(),
    /** what this server charged, cumulative */
    charged: record.chargedCumulative.toString(),
    claimed: record.totalClaimed.toString(),
    settled: record.settled.toString(),
    refunded: record.refunded.toString(),
    balance: record.balance.toString(),
    withdrawRequestedAt: record.withdrawRequestedAt,
    lastClaimTransaction: record.lastClaimTx || null,
    lastRefundTransaction: record.lastRefundTx || null,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
  };
}

const channelsQuery = z.object({
  network: z.string().max(40).optional(),
  payer: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address').optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** ?network=&payer=&limit= of the admin channel listing. */
export function parseChannelsQuery(url: string): z.infer<typeof channelsQuery> {
  const parsed = channelsQuery.safeParse(Object.fromEntries(new URL(url).searchParams));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ApiError(400, 'invalid_request', `${issue.path.join('.')}: ${issue.message}`, { field: issue.path.join('.') });
  }
  return parsed.data;
}

export const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;
