// Sends transactions from one settlement key: the short ordered section (nonce, local signing, send) and the
// watch for the receipt that tells a dropped transaction (sent again, same bytes) from a replaced one (its
// nonce went to another transaction: the caller decides whether to send its call again).
// Every transaction it broadcast is kept (hash and signed bytes) until its nonce is mined, so one the node
// loses is sent again even once nobody waits for it any more (its caller answered 'unknown' and left it to
// the reconciler): a lost transaction would otherwise leave a nonce gap that stalls every later one.
// A gap nobody here has the bytes for (the transaction of an instance that died, or of this process before a
// restart, lost by the node since) is filled with a no-op once it has lasted GAP_GRACE_MS (see #fillGap).
// Every facilitator that sends from the same key in this process must use the same EvmSender (evmSender()
// hands it out per chain and address), and instances sharing a key coordinate through the ledger's
// NonceAllocator (see nonce-allocator.ts).
//
// Nothing but the nonce, the signature and the send runs in the ordered section. Outside it:
//   - the chain id is the configured network's: never read;
//   - fees are read at most every FEE_REFRESH_MS, in the background while the cached ones are younger than
//     FEE_MAX_AGE_MS; maxFeePerGas = 2 x base fee + tip stays above the base fee through six full blocks of
//     the largest rise EIP-1559 allows (+12.5% a block: 1.125^6 = 2.03), i.e. 12 s on base: the bound;
//   - the gas limit comes from the caller (the facilitator's simulation, eth_estimateGas, plus a margin).
import {
  keccak256,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Address,
  type Chain,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from 'viem';
import { isNodeRejection } from './evm-errors.ts';
import { ProcessNonces, type NonceAllocator, type NonceUse, type PendingCount } from '../../../store/nonce-allocator.ts';

export const FEE_REFRESH_MS = 2_000;
export const FEE_MAX_AGE_MS = 10_000;

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface TransactionRequest {
  to: Address;
  data?: Hex;
  value?: bigint;
  /** the gas limit; estimated (outside the ordered section) when absent */
  gas?: bigint;
}

export type SendResult =
  /** the node accepted it (or already had it): it may be mined */
  | { status: 'broadcast'; transaction: Hex; nonce: number; raw: Hex }
  /** certainly not sent: it could not be prepared (e.g. gas estimation reverted), or the node refused it */
  | { status: 'rejected'; error: unknown }
  /** the send failed in a way that leaves open whether the node got it */
  | { status: 'uncertain'; transaction: Hex; error: unknown };

/** What a facilitator needs to send from a settlement key (EvmSender; a test may stand in). */
export interface TransactionSender {
  readonly address: Address;
  send(request: TransactionRequest): Promise<SendResult>;
  /** sends again what it broadcast and the node lost (see EvmSender.rebroadcast) */
  rebroadcast?(): Promise<unknown>;
}

export type WatchResult =
  | { status: 'mined'; receipt: TransactionReceipt }
  /** its nonce was used by another transaction: it can never be mined */
  | { status: 'replaced' }
  | { status: 'timeout' };

/** Polls between checks that the node still has the transaction (dropped or replaced). */
const HEALTH_CHECK_EVERY_MS = 1_000;

/**
 * How long a nonce gap must last, over at least two checks, before it is filled with a no-op. Long enough for
 * a transaction another instance sent through another node to reach ours, and for a live owner of the nonce
 * (which re-sends its own lost transactions every HEALTH_CHECK_EVERY_MS) to fill it first with its own bytes.
 */
export const GAP_GRACE_MS = 3_000;

/** Gas of a plain transfer: the no-op that fills a gap (0 value to the key itself, no data). */
const TRANSFER_GAS = 21_000n;

/** A nonce is stale ("too low"): someone else used it; anything else a node says about a nonce is not that. */
const STALE_NONCE = /nonce too low|nonce has already been used|already known|replacement transaction underpriced|NONCE_EXPIRED/i;

export interface EvmSenderOptions {
  client: PublicClient<Transport, Chain>;
  account: PrivateKeyAccount;
  chainId: number;
  /**
   * the key's nonce allocator when other instances send with it too (the ledger's), asked at the first send;
   * undefined (or absent): this process only
   */
  nonces?: (pendingCount: PendingCount) => NonceAllocator | undefined;
  /** how long a nonce gap must last before it is filled; GAP_GRACE_MS when absent (tests may shorten it) */
  gapGraceMs?: number;
}

export class EvmSender implements TransactionSender {
  readonly account: PrivateKeyAccount;
  readonly #client: PublicClient<Transport, Chain>;
  readonly #chainId: number;
  readonly #nonceSource: EvmSenderOptions['nonces'];
  #nonceAllocator: NonceAllocator | undefined;
  #fees: { value: Fees; at: number } | undefined;
  #feesLoading: Promise<Fees> | undefined;
  /** broadcast transactions whose nonce is not yet mined, by nonce */
  readonly #unmined = new Map<number, { transaction: Hex; raw: Hex }>();
  #rebroadcasting: Promise<number | undefined> | undefined;
  readonly #gapGraceMs: number;
  /** the nonce gap seen at the last check, and since when */
  #gap: { nonce: number; since: number } | undefined;

  constructor(options: EvmSenderOptions) {
    this.#client = options.client;
    this.account = options.account;
    this.#chainId = options.chainId;
    this.#nonceSource = options.nonces;
    this.#gapGraceMs = options.gapGraceMs ?? GAP_GRACE_MS;
  }

  /** Made at the first send: a shared ledger may be opened after the facilitators are built. */
  get #nonces(): NonceAllocator {
    const pendingCount = () => this.pendingCount();
    return (this.#nonceAllocator ??= this.#nonceSource?.(pendingCount) ?? new ProcessNonces(pendingCount));
  }

  get address(): Address {
    return this.account.address;
  }

  /** The key's first unused nonce, counting transactions the node holds but has not mined. */
  pendingCount(): Promise<number> {
    return this.#client.getTransactionCount({ address: this.account.address, blockTag: 'pending' });
  }

  /** Signs and sends `call` with the key's next nonce. The hash is known before the send, so a transport
   *  failure mid-send is 'unknown' with that hash, never a false 'failed'. */
  async send(request: TransactionRequest): Promise<SendResult> {
    let fees: Fees;
    let gas: bigint;
    try {
      [fees, gas] = await Promise.all([
        this.fees(),
        request.gas ?? this.#client.estimateGas({ account: this.account, to: request.to, data: request.data, value: request.value }),
      ]);
    } catch (error) {
      return { status: 'rejected', error };
    }
    const call = { to: request.to, data: request.data, value: request.value ?? 0n, gas };
    let signing = false;
    return this.#nonces.withNextNonce(async (nonce): Promise<NonceUse<SendResult>> => {
      signing = true;
      let raw: Hex;
      try {
        raw = await this.account.signTransaction({ type: 'eip1559', chainId: this.#chainId, nonce, ...call, ...fees });
      } catch (error) {
        return { spent: false, value: { status: 'rejected', error } };
      }
      const transaction = keccak256(raw);
      try {
        await this.#client.sendRawTransaction({ serializedTransaction: raw });
        return { spent: true, value: this.#broadcast(transaction, nonce, raw) };
      } catch (error) {
        // Trust our own eyes over the error: if the node has the transaction, it was broadcast.
        if (await this.#known(transaction)) return { spent: true, value: this.#broadcast(transaction, nonce, raw) };
        if (isNodeRejection(error)) {
          return { spent: false, stale: STALE_NONCE.test(errorText(error)), value: { status: 'rejected', error } };
        }
        // Not known to the node now: the nonce goes to the next call. Should this one still arrive, only one
        // of the two is mined, and the other's watch sees it replaced.
        return { spent: false, value: { status: 'uncertain', transaction, error } };
      }
    }).catch((error: unknown): SendResult => {
      // no nonce could be had (the shared ledger's database is unavailable): nothing was signed, nothing sent
      if (!signing) return { status: 'rejected', error };
      throw error;
    });
  }

  #broadcast(transaction: Hex, nonce: number, raw: Hex): SendResult {
    this.#unmined.set(nonce, { transaction, raw });
    return { status: 'broadcast', transaction, nonce, raw };
  }

  /**
   * Waits until `sent` is mined, replaced, or `timeoutMs` passes. Every HEALTH_CHECK_EVERY_MS without a
   * receipt it reads the key's mined count: past its nonce without its receipt means replaced; else every
   * transaction of this key the node lost (this one, or one below it that holds it back) is sent again, the
   * same bytes: the same hash, never a second payment.
   */
  async watch(sent: { transaction: Hex; nonce: number; raw: Hex }, timeoutMs: number, pollingIntervalMs: number): Promise<WatchResult> {
    const deadline = Date.now() + timeoutMs;
    let nextHealthCheck = Date.now() + HEALTH_CHECK_EVERY_MS;
    for (;;) {
      const receipt = await this.#receipt(sent.transaction);
      if (receipt) return this.#mined(sent.nonce, receipt);
      if (Date.now() >= deadline) return { status: 'timeout' };
      if (Date.now() >= nextHealthCheck) {
        nextHealthCheck = Date.now() + HEALTH_CHECK_EVERY_MS;
        const mined = await this.rebroadcast();
        if (mined !== undefined && mined > sent.nonce) {
          // mined just now, or its nonce went elsewhere: the receipt tells which
          const late = await this.#receipt(sent.transaction);
          if (late) return this.#mined(sent.nonce, late);
          this.#unmined.delete(sent.nonce);
          return { status: 'replaced' };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, pollingIntervalMs));
    }
  }

  #mined(nonce: number, receipt: TransactionReceipt): WatchResult {
    // its nonce and every one below are used: none of those can be mined any more
    for (const kept of this.#unmined.keys()) if (kept <= nonce) this.#unmined.delete(kept);
    return { status: 'mined', receipt };
  }

  /**
   * Sends again, in nonce order, every transaction of this key that is not mined and that the node no longer
   * has (dropped from its mempool, or lost by a restarted node); forgets those whose nonce is mined; fills a
   * lasting gap below them (#fillGap). Returns the key's mined count (undefined if the node did not answer).
   * One run at a time: callers share it.
   * The watch calls it, and so does the reconciler's check of a pending settlement (checkSettlement).
   */
  rebroadcast(): Promise<number | undefined> {
    return (this.#rebroadcasting ??= this.#rebroadcast().finally(() => (this.#rebroadcasting = undefined)));
  }

  async #rebroadcast(): Promise<number | undefined> {
    const mined = await this.#client.getTransactionCount({ address: this.account.address, blockTag: 'latest' }).catch(() => undefined);
    if (mined === undefined) return undefined;
    for (const nonce of this.#unmined.keys()) if (nonce < mined) this.#unmined.delete(nonce);
    const waiting = [...this.#unmined].sort(([a], [b]) => a - b);
    for (const [, { transaction, raw }] of waiting) {
      if (!(await this.#known(transaction))) await this.#client.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined);
    }
    await this.#fillGap(mined).catch(() => undefined); // a failed read or send: the next check tries again
    return mined;
  }

  /**
   * Nonce `mined` is the key's next to be mined. If we wait for a transaction above it, hold no bytes for it,
   * and the node has no transaction at it (its pending count is `mined`: geth and anvil count only what can
   * be mined next), it is a gap nobody here can fill with its own transaction: one sent by an instance that
   * died (or by this process before a restart), which the node then lost. Every later transaction of the key
   * waits behind it for ever. Once the same gap has lasted GAP_GRACE_MS, a no-op takes the nonce: a 0-value
   * transfer to the key itself. Never the lost transaction (were its bytes stored somewhere): its instance died
   * before answering its client, so settling it would charge for a result never delivered; its authorization
   * stays unused and the reconciler fails that payment once it expires. Should the lost transaction reach the
   * node after all, only one of the two is mined (same nonce): never a second payment.
   * Outside the ordered section, racing no one: the allocator handed out our waiting nonces above `mined`, so
   * its counter is past it already. If it re-reads the chain's count (a stale nonce, an error) and gives
   * `mined` to a new call, the node keeps one of the two and the other's sender moves on (stale or replaced).
   */
  async #fillGap(mined: number): Promise<void> {
    const waiting = [...this.#unmined.keys()].some((nonce) => nonce > mined);
    if (!waiting || this.#unmined.has(mined) || (await this.pendingCount()) > mined) {
      this.#gap = undefined;
      return;
    }
    if (this.#gap?.nonce !== mined) {
      this.#gap = { nonce: mined, since: Date.now() };
      return;
    }
    if (Date.now() - this.#gap.since < this.#gapGraceMs) return;
    const raw = await this.account.signTransaction({
      type: 'eip1559',
      chainId: this.#chainId,
      nonce: mined,
      to: this.account.address,
      value: 0n,
      gas: TRANSFER_GAS,
      ...(await this.fees()),
    });
    await this.#client.sendRawTransaction({ serializedTransaction: raw });
    // kept like any transaction of ours: sent again if the node loses it, forgotten once its nonce is mined
    this.#broadcast(keccak256(raw), mined, raw);
    this.#gap = undefined;
  }

  /** Fees for a transaction sent now, within the bound stated at the top of this file. */
  fees(): Promise<Fees> {
    const age = this.#fees ? Date.now() - this.#fees.at : Infinity;
    if (age > FEE_REFRESH_MS && !this.#feesLoading) {
      this.#feesLoading = this.#readFees().finally(() => (this.#feesLoading = undefined));
      this.#feesLoading.catch(() => undefined); // a background refresh's failure shows on the next read
    }
    if (this.#fees && age <= FEE_MAX_AGE_MS) return Promise.resolve(this.#fees.value);
    return this.#feesLoading!;
  }

  async #readFees(): Promise<Fees> {
    const [block, tip] = await Promise.all([this.#client.getBlock({ blockTag: 'latest' }), this.#client.estimateMaxPriorityFeePerGas()]);
    const baseFee = block.baseFeePerGas ?? 0n;
    const value = { maxFeePerGas: baseFee * 2n + tip, maxPriorityFeePerGas: tip };
    this.#fees = { value, at: Date.now() };
    return value;
  }

  async #receipt(hash: Hex): Promise<TransactionReceipt | undefined> {
    try {
      return await this.#client.getTransactionReceipt({ hash });
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return undefined;
      return undefined; // a failed poll: the next one tries again
    }
  }

  async #known(hash: Hex): Promise<boolean> {
    try {
      await this.#client.getTransaction({ hash });
      return true;
    } catch (error) {
      if (!(error instanceof TransactionNotFoundError)) return true; // cannot tell: assume it is there
      return false;
    }
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.message} ${'details' in error ? String(error.details) : ''}`;
  return String(error);
}

const senders = new Map<string, EvmSender>();

/**
 * The one sender of `account` on chain `chainId` in this process; the first caller's client and nonce
 * allocator are kept. Facilitators that send from the same key (exact, upto) must get theirs here.
 */
export function evmSender(options: EvmSenderOptions): EvmSender {
  const key = `${options.chainId}:${options.account.address.toLowerCase()}:${options.client.transport.url ?? ''}`;
  let sender = senders.get(key);
  if (!sender) {
    sender = new EvmSender(options);
    senders.set(key, sender);
  }
  return sender;
}
