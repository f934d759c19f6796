// Reconciliation of an EVM settlement whose outcome was unknown, for any scheme whose authorization is spent by
// consuming a one-use nonce (EIP-3009 for exact, Permit2 for upto): our transaction's receipt when we have its
// hash, else the nonce's state and the clock read at one block so they agree.
import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
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
  /**
   * settles the authorization anew (a new transaction), for when our transaction is nowhere: the node does not
   * have it and nothing here holds its bytes to send again. Absent: such a payment waits for the authorization
   * to expire.
   */
  resettle?: () => Promise<SettleOutcome>;
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
      // ours, unless the node never had it (then another transaction carried it: one settled anew)
      const ours = hash && !receipt && !(await nodeLacks(client, hash)) ? hash : undefined;
      return { status: 'settled', transaction: ours ?? (check.findTransaction ? await check.findTransaction() : ''), payer };
    }
    // Our batch was mined without this transfer, and nothing else used the nonce: that hash can never settle it.
    if (receipt) return { status: 'failed', reason: check.revertedReason, payer, transaction };
    if (check.expired(block.timestamp)) return { status: 'failed', reason: check.expiredReason, payer, transaction };
    // still able to land: if the node dropped our transaction (or one below it that holds it back), it is sent again
    await check.rebroadcast?.();
    // Sent again or not, the node does not have it: its broadcast was cut (an RPC outage) and its nonce went to
    // later transactions, or it was lost with nobody left holding its bytes. It can never be mined, and the
    // authorization is unused and still valid: it is settled anew. The token lets one of any two transactions
    // carrying it through, so this never charges twice (should the lost one surface after all, one reverts).
    if (hash && check.resettle && (await nodeLacks(client, hash))) return await settledAnew(check);
    return { status: 'unknown', reason: SETTLEMENT_PENDING, payer, transaction };
  } catch (error) {
    return { status: 'unknown', reason: `rpc_unavailable: ${shortMessage(error)}`, payer, transaction };
  }
}

/** True only when the node answers that it has no such transaction (never on an error). */
async function nodeLacks(client: PublicClient, hash: Hex): Promise<boolean> {
  try {
    await client.getTransaction({ hash });
    return false;
  } catch (error) {
    return error instanceof TransactionNotFoundError;
  }
}

/**
 * The new settlement's outcome. A refusal is believed only while the authorization is still unused: a lost
 * transaction that surfaced and landed meanwhile (or another path) makes the new one fail although the payment
 * is settled.
 */
async function settledAnew(check: NonceSettlementCheck): Promise<SettleOutcome> {
  const outcome = await check.resettle!();
  if (outcome.status !== 'failed') return outcome;
  const block = await check.client.getBlock({ blockTag: 'latest' });
  if (!(await check.nonceUsed(block.number))) return outcome;
  return { status: 'settled', transaction: check.findTransaction ? await check.findTransaction() : '', payer: check.payer };
}
