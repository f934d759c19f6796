// Settlement batching for one settlement key: the EIP-3009 transfers that queue up while the key's previous
// transaction is being sent go out together, as one Multicall3 aggregate3 transaction whose calls may each
// fail alone (allowFailure). Nothing waits to fill a batch: a transfer that finds the sender idle is sent at
// once, by itself, straight to the token, exactly as without batching; only those arriving while a send is in
// progress share the next transaction (group commit). Each caller then reads its own outcome from the shared
// receipt: the token's AuthorizationUsed event for its (payer, nonce) is there only if its call succeeded.
import { encodeFunctionData, parseEventLogs, parseAbiItem, isAddressEqual, type Address, type Hex, type TransactionReceipt } from 'viem';
import type { EvmSender, SendResult, TransactionRequest, WatchResult } from './evm-sender.ts';
import { MULTICALL3_ADDRESS, multicall3Abi } from './multicall3-abi.ts';

/** At most this many transfers per transaction (about 90k gas each: a batch stays far below any block limit). */
export const MAX_BATCH_CALLS = 20;
/** Gas for aggregate3 itself (calldata offsets, the loop, copying results), over the calls' own limits. */
const BATCH_OVERHEAD_GAS = 10_000n;
const PER_CALL_OVERHEAD_GAS = 5_000n;

export const authorizationUsedEvent = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** One transfer to send: the token call and its gas limit (a lone transaction's, margin included). */
export type SettlementCall = Required<Pick<TransactionRequest, 'to' | 'data' | 'gas'>>;

export type SubmitResult =
  | Extract<SendResult, { status: 'rejected' | 'uncertain' }>
  /** the transaction carrying the call was broadcast, and then mined, replaced or not seen in time */
  | { status: 'sent'; transaction: Hex; watched: WatchResult };

/** What the batcher needs of the key's sender (EvmSender; a test may wrap it). */
export type BatchSender = Pick<EvmSender, 'send' | 'watch'>;

/** Sends `call` alone and waits for its transaction: what settling means without batching. */
export async function sendAndWatch(sender: BatchSender, call: SettlementCall, timeoutMs: number, pollingIntervalMs: number): Promise<SubmitResult> {
  const sent = await sender.send(call);
  if (sent.status !== 'broadcast') return sent;
  return { status: 'sent', transaction: sent.transaction, watched: await sender.watch(sent, timeoutMs, pollingIntervalMs) };
}

/**
 * Whether a mined transaction of ours moved the token under this authorization. A direct call to the token
 * did if it succeeded; a batch succeeds whatever its calls did, so there it takes the token's AuthorizationUsed
 * event for this (authorizer, nonce).
 */
export function receiptUsesAuthorization(receipt: TransactionReceipt, token: Address, authorizer: Address, nonce: Hex): boolean {
  if (receipt.status !== 'success') return false;
  if (receipt.to && isAddressEqual(receipt.to, token)) return true;
  const tokenLogs = receipt.logs.filter((log) => isAddressEqual(log.address, token));
  return parseEventLogs({ abi: [authorizationUsedEvent], logs: tokenLogs, strict: true }).some(
    (event) => isAddressEqual(event.args.authorizer, authorizer) && event.args.nonce.toLowerCase() === nonce.toLowerCase(),
  );
}

interface Waiting {
  call: SettlementCall;
  timeoutMs: number;
  resolve: (result: SubmitResult) => void;
  reject: (error: unknown) => void;
}

export class SettlementBatcher {
  readonly #sender: BatchSender;
  readonly #pollingIntervalMs: number;
  readonly #maxCalls: number;
  #queue: Waiting[] = [];
  #sending = false;

  constructor(sender: BatchSender, options: { pollingIntervalMs: number; maxCalls?: number }) {
    this.#sender = sender;
    this.#pollingIntervalMs = options.pollingIntervalMs;
    this.#maxCalls = options.maxCalls ?? MAX_BATCH_CALLS;
  }

  /** Transfers waiting for the send in progress to finish (they go out together next). */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Sends `call` with whatever else is waiting, and waits up to `timeoutMs` for the transaction. */
  submit(call: SettlementCall, timeoutMs: number): Promise<SubmitResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ call, timeoutMs, resolve, reject });
      if (!this.#sending) void this.#sendWaiting();
    });
  }

  /** Sends what waits, batch after batch, until nothing does; watching each batch does not hold up the next. */
  async #sendWaiting(): Promise<void> {
    this.#sending = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#maxCalls);
        let sent: SendResult;
        try {
          sent = await this.#sender.send(batchRequest(batch.map((w) => w.call)));
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
          continue;
        }
        if (sent.status !== 'broadcast') {
          for (const waiting of batch) waiting.resolve(sent);
          continue;
        }
        const timeoutMs = Math.min(...batch.map((w) => w.timeoutMs));
        this.#sender.watch(sent, timeoutMs, this.#pollingIntervalMs).then(
          (watched) => batch.forEach((w) => w.resolve({ status: 'sent', transaction: sent.transaction, watched })),
          (error: unknown) => batch.forEach((w) => w.reject(error)),
        );
      }
    } finally {
      this.#sending = false;
    }
  }
}

/** One call goes to its target as it is; several go through aggregate3, each allowed to fail alone. */
export function batchRequest(calls: SettlementCall[]): SettlementCall {
  if (calls.length === 1) return calls[0]!;
  return {
    to: MULTICALL3_ADDRESS,
    data: encodeFunctionData({
      abi: multicall3Abi,
      functionName: 'aggregate3',
      args: [calls.map((call) => ({ target: call.to, allowFailure: true, callData: call.data }))],
    }),
    // each call's own limit already counts a transaction's 21,000 base cost: a margin the batch pays once
    gas: calls.reduce((sum, call) => sum + call.gas + PER_CALL_OVERHEAD_GAS, BATCH_OVERHEAD_GAS),
  };
}
