// A litesvm runtime that behaves like a cluster seen through an RPC: slots advance with wall-clock time,
// every new slot brings a new blockhash, a blockhash stays usable for 150 blocks (~60 s) and then
// expires, signatures get statuses, and sent transactions can be held back (like anvil's automine off).
// litesvm itself only knows one "latest" blockhash; this class keeps the window of recent ones.
import { LiteSVM, FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import {
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Transaction,
} from '@solana/kit';
import { transactionErrorJson, type TransactionErrorJson } from './transaction-error.ts';

export interface SvmChainOptions {
  /** wall-clock length of a slot; default 400 ms like mainnet */
  slotMs?: number;
  /** how many blocks a blockhash stays valid; default 150 (as on mainnet) */
  blockhashLifetimeBlocks?: number;
}

export interface ExecutionResult {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
}

export interface SignatureStatus {
  slot: bigint;
  confirmations: bigint | null;
  err: TransactionErrorJson | null;
  confirmationStatus: 'confirmed' | 'finalized';
}

/** A transaction that cannot enter a block; `err` is what a validator's preflight would report. */
export class TransactionRejected extends Error {
  readonly err: TransactionErrorJson;
  readonly result: ExecutionResult;
  constructor(result: ExecutionResult & { err: TransactionErrorJson }) {
    super(typeof result.err === 'string' ? result.err : JSON.stringify(result.err));
    this.err = result.err;
    this.result = result;
  }
}

const FINALIZED_AFTER = 32n;
const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const base58 = getBase58Decoder();

/** Decodes wire bytes; throws on anything that is not one complete transaction. */
export function decodeWireTransaction(wire: Uint8Array): { transaction: Transaction; blockhash: string; signature: string } {
  const [transaction, end] = transactionDecoder.read(wire, 0);
  if (end !== wire.length) throw new Error('trailing bytes after the transaction');
  const message = messageDecoder.decode(transaction.messageBytes);
  const first = Object.values(transaction.signatures)[0];
  return {
    transaction,
    blockhash: message.lifetimeToken,
    signature: base58.decode(first ?? new Uint8Array(64)),
  };
}

function resultOf(outcome: TransactionMetadata | FailedTransactionMetadata | { meta(): TransactionMetadata }): ExecutionResult {
  // a successful send returns the metadata itself; failures and simulations wrap it
  const meta = 'meta' in outcome ? outcome.meta() : outcome;
  return {
    err: outcome instanceof FailedTransactionMetadata ? transactionErrorJson(outcome.err()) : null,
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
  };
}

export class SvmChain {
  readonly svm: LiteSVM;
  readonly #slotMs: number;
  readonly #lifetime: bigint;
  readonly #startedAt = Date.now();
  readonly #startSlot: bigint;
  #warped = 0n;
  #slot: bigint;
  /** recent blockhash -> last block height at which it is valid */
  readonly #blockhashes = new Map<string, bigint>();
  readonly #statuses = new Map<string, { slot: bigint; err: TransactionErrorJson | null }>();
  #automine = true;
  readonly #held: { transaction: Transaction; signature: string; blockhash: string }[] = [];

  constructor(options: SvmChainOptions = {}) {
    this.svm = new LiteSVM();
    this.#slotMs = options.slotMs ?? 400;
    this.#lifetime = BigInt(options.blockhashLifetimeBlocks ?? 150);
    this.#startSlot = this.svm.getClock().slot;
    this.#slot = this.#startSlot;
    this.#blockhashes.set(this.svm.latestBlockhash(), this.#slot + this.#lifetime);
  }

  /** Catches the runtime up with the wall clock: a new slot, a new blockhash, old ones forgotten. */
  #sync(): void {
    const elapsed = BigInt(Math.floor((Date.now() - this.#startedAt) / this.#slotMs));
    const target = this.#startSlot + elapsed + this.#warped;
    if (target <= this.#slot) return;
    this.#slot = target;
    this.svm.warpToSlot(target);
    this.svm.expireBlockhash();
    this.#blockhashes.set(this.svm.latestBlockhash(), target + this.#lifetime);
    for (const [hash, lastValid] of this.#blockhashes) if (lastValid < target) this.#blockhashes.delete(hash);
  }

  slot(): bigint {
    this.#sync();
    return this.#slot;
  }

  /** litesvm has no skipped slots, so the block height is the slot. */
  blockHeight(): bigint {
    return this.slot();
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    this.#sync();
    const blockhash = this.svm.latestBlockhash();
    return { blockhash, lastValidBlockHeight: this.#blockhashes.get(blockhash) ?? this.#slot + this.#lifetime };
  }

  isBlockhashValid(blockhash: string): boolean {
    this.#sync();
    const lastValid = this.#blockhashes.get(blockhash);
    return lastValid !== undefined && lastValid >= this.#slot;
  }

  /** Jumps ahead; `advanceBlocks(151)` expires every blockhash handed out so far. */
  advanceBlocks(blocks: number): void {
    this.#warped += BigInt(blocks);
    this.#sync();
  }

  /** Runs `fn` with litesvm's signature and blockhash checks set for this one call (litesvm is synchronous). */
  #with<T>(checks: { sigVerify: boolean; blockhashCheck: boolean }, fn: () => T): T {
    this.svm.withSigverify(checks.sigVerify).withBlockhashCheck(checks.blockhashCheck);
    try {
      return fn();
    } finally {
      this.svm.withSigverify(true).withBlockhashCheck(true);
    }
  }

  /** Missing signatures are a client error, not a transaction error, on a real RPC too. */
  #fullySigned(transaction: Transaction): boolean {
    return Object.values(transaction.signatures).every((s) => s !== null && s !== undefined);
  }

  simulate(wire: Uint8Array, options: { sigVerify: boolean; replaceRecentBlockhash: boolean }): ExecutionResult {
    const { transaction, blockhash } = decodeWireTransaction(wire);
    this.#sync();
    if (options.sigVerify && !this.#fullySigned(transaction)) return { err: 'SignatureFailure', logs: [], unitsConsumed: 0n };
    if (!options.replaceRecentBlockhash && !this.isBlockhashValid(blockhash)) {
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n };
    }
    // litesvm accepts only its latest blockhash; our window has already judged the blockhash.
    const outcome = this.#with({ sigVerify: options.sigVerify, blockhashCheck: false }, () =>
      this.svm.simulateTransaction(transaction as never),
    );
    return resultOf(outcome);
  }

  /**
   * Checks a transaction like a validator's preflight and then executes it (or holds it while automine
   * is off). Throws TransactionRejected when it could never land; returns its signature otherwise.
   */
  send(wire: Uint8Array, options: { skipPreflight: boolean }): string {
    const { transaction, blockhash, signature } = decodeWireTransaction(wire);
    if (!this.#fullySigned(transaction)) throw new TransactionRejected({ err: 'SignatureFailure', logs: [], unitsConsumed: 0n });
    if (this.#statuses.has(signature) || this.#held.some((h) => h.signature === signature)) {
      throw new TransactionRejected({ err: 'AlreadyProcessed', logs: [], unitsConsumed: 0n });
    }
    if (!this.isBlockhashValid(blockhash)) throw new TransactionRejected({ err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n });
    if (!options.skipPreflight) {
      const preflight = this.simulate(wire, { sigVerify: true, replaceRecentBlockhash: false });
      if (preflight.err !== null) throw new TransactionRejected({ ...preflight, err: preflight.err });
    }
    if (this.#automine) this.#execute(transaction, signature, blockhash);
    else this.#held.push({ transaction, signature, blockhash });
    return signature;
  }

  /** Executes at once, whatever automine says (sandbox housekeeping); throws when it fails. */
  execute(wire: Uint8Array): string {
    const { transaction, blockhash, signature } = decodeWireTransaction(wire);
    this.#execute(transaction, signature, blockhash);
    const status = this.#statuses.get(signature);
    if (!status || status.err !== null) throw new Error(`sandbox transaction failed: ${JSON.stringify(status?.err ?? 'not executed')}`);
    return signature;
  }

  #execute(transaction: Transaction, signature: string, blockhash: string): void {
    // A held transaction whose blockhash expired meanwhile is dropped, as a validator would.
    if (!this.isBlockhashValid(blockhash)) return;
    const outcome = this.#with({ sigVerify: true, blockhashCheck: false }, () => this.svm.sendTransaction(transaction as never));
    const { err } = resultOf(outcome);
    // Signature failures and the like never make it into a block; execution errors do (fees are paid).
    if (err === 'SignatureFailure' || err === 'BlockhashNotFound' || err === 'AlreadyProcessed' || err === 'SanitizeFailure') return;
    this.#statuses.set(signature, { slot: this.#slot, err });
  }

  /** While off, sent transactions are accepted but not executed until mine(). */
  setAutomine(enabled: boolean): void {
    this.#automine = enabled;
  }

  /** Executes every held transaction, in the order they were sent. */
  mine(): void {
    this.#sync();
    for (const held of this.#held.splice(0)) this.#execute(held.transaction, held.signature, held.blockhash);
  }

  signatureStatus(signature: string): SignatureStatus | null {
    const status = this.#statuses.get(signature);
    if (!status) return null;
    const confirmations = this.slot() - status.slot;
    return confirmations >= FINALIZED_AFTER
      ? { slot: status.slot, confirmations: null, err: status.err, confirmationStatus: 'finalized' }
      : { slot: status.slot, confirmations, err: status.err, confirmationStatus: 'confirmed' };
  }
}
