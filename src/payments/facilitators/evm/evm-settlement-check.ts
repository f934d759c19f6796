// Reconciliation of an EVM settlement whose outcome was unknown, for any scheme whose authorization is spent by
// consuming a one-use nonce (EIP-3009 for exact, Permit2 for upto): our transaction's receipt when we have its
// hash, else the nonce's state and the clock read at one block so they agree.
import { TransactionReceiptNotFoundError, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import type { SettleOutcome } from '../../facilitator.ts';
import { shortMessage } from './evm-errors.ts';
import { SETTLEMENT_PENDING } from '../../reasons.ts';

export interface NonceSettlementCheck {
  client: PublicClient;
  payer: string;
  /** our settlement's hash, or '' when the process died before the node answered */
  transaction: string;
  /** whether the authorization's nonce is consumed at this block */
  nonceUsed: (blockNumber: bigint) => Promise<boolean>;
  /** whether no block with this timestamp (or later) can include the authorization any more */
  expired: (timestamp: bigint) => boolean;
  /** why our own transaction, mined, failed */
  revertedReason: string;
  /** why an authorization past its deadline is certainly not settled */
  expiredReason: string;
  /** names the transaction that consumed the nonce when we lost our own hash ('' if it cannot) */
  findTransaction?: () => Promise<string>;
  /**
   * whether our successful transaction carried this authorization's transfer; a batch transaction succeeds
   * even when one of its calls failed. Absent: success means it did.
   */
  carried?: (receipt: TransactionReceipt) => boolean;
  /** sends again what this process broadcast and the node lost (EvmSender.rebroadcast), while it is pending */
  rebroadcast?: () => Promise<unknown>;
}

export async function settlementFromChain(check: NonceSettlementCheck): Promise<SettleOutcome> {
  const { client, payer, transaction } = check;
  const hash = /^0x[0-9a-fA-F]{64}$/.test(transaction) ? (transaction as Hex) : undefined;
  try {
    const receipt = hash
      ? await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
          if (error instanceof TransactionReceiptNotFoundError) return undefined;
          throw error;
        })
      : undefined;
    if (receipt?.status === 'reverted') return { status: 'failed', reason: check.revertedReason, payer, transaction };
    if (receipt && (check.carried?.(receipt) ?? true)) return { status: 'settled', transaction, payer };
    const block = await client.getBlock({ blockTag: 'latest' });
    // The nonce is consumed: the transfer landed, possibly through another transaction.
    // (A payer may also cancel or invalidate its own nonce; x402 clients do not.)
    if (await check.nonceUsed(block.number)) {
      const ours = hash && !receipt ? hash : undefined;
      return { status: 'settled', transaction: ours ?? (check.findTransaction ? await check.findTransaction() : ''), payer };
    }
    // Our batch was mined without this transfer, and nothing else used the nonce: that hash can never settle it.
    if (receipt) return { status: 'failed', reason: check.revertedReason, payer, transaction };
    if (check.expired(block.timestamp)) return { status: 'failed', reason: check.expiredReason, payer, transaction };
    // still able to land: if the node dropped our transaction (or one below it that holds it back), it is sent again
    await check.rebroadcast?.();
    return { status: 'unknown', reason: SETTLEMENT_PENDING, payer, transaction };
  } catch (error) {
    return { status: 'unknown', reason: `rpc_unavailable: ${shortMessage(error)}`, payer, transaction };
  }
}
