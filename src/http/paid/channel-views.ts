// How a payment channel (x402 batch-settlement) is shown: by /api/v1/payments/:id (its channel id) and the
// operator's /api/v1/admin/channels. Every amount is an exact decimal string of atomic units. Shown to anyone:
// the escrow already shows the same on chain; the latest voucher's signature is not shown. The admin listing's
// query is read in admin/admin-query.ts.
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

export const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;
