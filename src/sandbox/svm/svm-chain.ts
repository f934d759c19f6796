// A litesvm runtime that behaves like a cluster seen through an RPC: slots advance with wall-clock time,
// every new slot brings a new blockhash, a blockhash stays usable for 150 blocks (~60 s) and then
// expires, signatures get statuses, and sent transactions can be held back (like anvil's automine off).
// litesvm itself only knows one "latest" blockhash; this class keeps the window of recent ones.
// Transactions that land are recorded (balances around them, logs, fee) for getTransaction.
import { existsSync } from 'node:fs';
import { LiteSVM, FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import {
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type Transaction,
} from '@solana/kit';
import { tokenBalanceJson, type TokenBalanceJson } from './account-json.ts';
import { transactionErrorJson, type TransactionErrorJson } from './transaction-error.ts';

export interface SvmChainOptions {
  /** a litesvm snapshot to resume from (LiteSVM.saveToFile), when it exists */
  snapshot?: string;
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

/** What getTransaction answers from: a landed transaction and what it did, as a validator stores it. */
export interface TransactionRecord {
  slot: bigint;
  /** unix seconds when it was executed */
  blockTime: number;
  wire: Uint8Array;
  /** lamports the fee payer paid */
  fee: bigint;
  /** lamports of the message's static account keys, in order, just before and after execution */
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalanceJson[];
  postTokenBalances: TokenBalanceJson[];
  /** per top-level instruction that made any (CPI), the instructions it invoked */
  innerInstructions: { index: number; instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array; stackHeight: number }[] }[];
  logs: string[];
  unitsConsumed: bigint;
  err: TransactionErrorJson | null;
}

/** A landed transaction naming an address, as getSignaturesForAddress lists it. */
export interface AddressSignature {
  signature: string;
  slot: bigint;
  blockTime: number;
  err: TransactionErrorJson | null;
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
/** getTransaction remembers this many of the latest transactions (older ones answer null, as if pruned). */
const TRANSACTION_HISTORY = 10_000;
const LAMPORTS_PER_SIGNATURE = 5000n;
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
/** Without a SetComputeUnitLimit the runtime allows 200k CU per non-budget instruction. */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const base58 = getBase58Decoder();

/** Base fee per signature plus the priority fee its compute-budget instructions ask for (what litesvm charges). */
export function feeForMessage(message: CompiledTransactionMessage): bigint {
  let units: bigint | undefined;
  let microLamports = 0n;
  let others = 0n;
  for (const ix of message.instructions) {
    const program = message.staticAccounts[ix.programAddressIndex];
    const data = ix.data ?? new Uint8Array();
    if (program !== COMPUTE_BUDGET) {
      others++;
      continue;
    }
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] === 2 && data.length >= 5) units = BigInt(view.getUint32(1, true));
    if (data[0] === 3 && data.length >= 9) microLamports = view.getBigUint64(1, true);
  }
  const limit = units ?? others * DEFAULT_UNITS_PER_INSTRUCTION;
  const priority = (limit * microLamports + 999_999n) / 1_000_000n;
  return BigInt(message.header.numSignerAccounts) * LAMPORTS_PER_SIGNATURE + priority;
}

export interface DecodedTransaction {
  wire: Uint8Array;
  transaction: Transaction;
  message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  blockhash: string;
  signature: string;
}

/** Decodes wire bytes; throws on anything that is not one complete transaction. */
export function decodeWireTransaction(wire: Uint8Array): DecodedTransaction {
  const [transaction, end] = transactionDecoder.read(wire, 0);
  if (end !== wire.length) throw new Error('trailing bytes after the transaction');
  const message = messageDecoder.decode(transaction.messageBytes);
  const first = Object.values(transaction.signatures)[0];
  return {
    wire,
    transaction,
    message,
    blockhash: message.lifetimeToken,
    signature: base58.decode(first ?? new Uint8Array(64)),
  };
}

type Outcome = TransactionMetadata | FailedTransactionMetadata | { meta(): TransactionMetadata };

/** a successful send returns the metadata itself; failures and simulations wrap it */
const metaOf = (outcome: Outcome): TransactionMetadata => ('meta' in outcome ? outcome.meta() : outcome);

function resultOf(outcome: Outcome): ExecutionResult {
  const meta = metaOf(outcome);
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
  /** signature -> record, oldest first (a Map keeps insertion order) */
  readonly #transactions = new Map<string, TransactionRecord>();
  #automine = true;
  readonly #held: DecodedTransaction[] = [];

  constructor(options: SvmChainOptions = {}) {
    this.svm = options.snapshot !== undefined && existsSync(options.snapshot) ? LiteSVM.loadFromFile(options.snapshot) : new LiteSVM();
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
    const decoded = decodeWireTransaction(wire);
    const { transaction, blockhash, signature } = decoded;
    if (!this.#fullySigned(transaction)) throw new TransactionRejected({ err: 'SignatureFailure', logs: [], unitsConsumed: 0n });
    if (this.#statuses.has(signature) || this.#held.some((h) => h.signature === signature)) {
      throw new TransactionRejected({ err: 'AlreadyProcessed', logs: [], unitsConsumed: 0n });
    }
    if (!this.isBlockhashValid(blockhash)) throw new TransactionRejected({ err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n });
    if (!options.skipPreflight) {
      const preflight = this.simulate(wire, { sigVerify: true, replaceRecentBlockhash: false });
      if (preflight.err !== null) throw new TransactionRejected({ ...preflight, err: preflight.err });
    }
    if (this.#automine) this.#execute(decoded);
    else this.#held.push(decoded);
    return signature;
  }

  /** transactions executed so far (a snapshot is worth writing only when this moved) */
  get executed(): number {
    return this.#executed;
  }

  #executed = 0;

  /** Executes at once, whatever automine says (sandbox housekeeping); throws when it fails. */
  execute(wire: Uint8Array): string {
    const decoded = decodeWireTransaction(wire);
    const { signature } = decoded;
    this.#execute(decoded);
    const status = this.#statuses.get(signature);
    if (!status || status.err !== null) throw new Error(`sandbox transaction failed: ${JSON.stringify(status?.err ?? 'not executed')}`);
    return signature;
  }

  /**
   * Lamports of the static account keys and the token accounts among them. Invoked programs are
   * skipped for token balances (as a validator does): they are never token accounts, and reading one
   * would copy its whole program.
   */
  #balances(message: CompiledTransactionMessage): { lamports: bigint[]; tokens: TokenBalanceJson[] } {
    const programs = new Set(message.instructions.map((ix) => ix.programAddressIndex));
    const tokens: TokenBalanceJson[] = [];
    const lamports = message.staticAccounts.map((key, index) => {
      const token = programs.has(index) ? undefined : tokenBalanceJson(this.svm, key, index);
      if (token) tokens.push(token);
      return this.svm.getBalance(key as never) ?? 0n;
    });
    return { lamports, tokens };
  }

  #execute(decoded: DecodedTransaction): void {
    this.#executed++;
    const { transaction, message, signature, blockhash } = decoded;
    // A held transaction whose blockhash expired meanwhile is dropped, as a validator would.
    if (!this.isBlockhashValid(blockhash)) return;
    const before = this.#balances(message);
    const outcome = this.#with({ sigVerify: true, blockhashCheck: false }, () => this.svm.sendTransaction(transaction as never));
    const after = this.#balances(message);
    const { err, logs, unitsConsumed } = resultOf(outcome);
    // Signature failures and the like never make it into a block; execution errors do (fees are paid).
    if (err === 'SignatureFailure' || err === 'BlockhashNotFound' || err === 'AlreadyProcessed' || err === 'SanitizeFailure') return;
    this.#statuses.set(signature, { slot: this.#slot, err });
    const innerInstructions = metaOf(outcome)
      .innerInstructions()
      .map((inner, index) => ({
        index,
        instructions: inner.map((ix) => {
          const compiled = ix.instruction();
          return { programIdIndex: compiled.programIdIndex(), accounts: [...compiled.accounts()], data: compiled.data(), stackHeight: ix.stackHeight() };
        }),
      }))
      .filter((inner) => inner.instructions.length > 0);
    this.#transactions.set(signature, {
      slot: this.#slot,
      blockTime: Math.floor(Date.now() / 1000),
      wire: decoded.wire,
      // litesvm charges exactly this (base fee per signature + priority fee), failed or not
      fee: feeForMessage(message),
      preBalances: before.lamports,
      postBalances: after.lamports,
      preTokenBalances: before.tokens,
      postTokenBalances: after.tokens,
      innerInstructions,
      logs,
      unitsConsumed,
      err,
    });
    // Bounded memory: forget the oldest record.
    if (this.#transactions.size > TRANSACTION_HISTORY) this.#transactions.delete(this.#transactions.keys().next().value!);
  }

  /** While off, sent transactions are accepted but not executed until mine(). */
  setAutomine(enabled: boolean): void {
    this.#automine = enabled;
  }

  /** Executes every held transaction, in the order they were sent. */
  mine(): void {
    this.#sync();
    for (const held of this.#held.splice(0)) this.#execute(held);
  }

  /** The record of a landed transaction, or undefined when unknown or no longer remembered. */
  transaction(signature: string): TransactionRecord | undefined {
    return this.#transactions.get(signature);
  }

  /**
   * The remembered transactions naming `address` among their accounts, newest first, as getSignaturesForAddress
   * lists them: at most `limit`, from the one after `before` when it is given.
   */
  signaturesFor(address: string, { limit, before }: { limit: number; before?: string }): AddressSignature[] {
    const found: AddressSignature[] = [];
    let started = before === undefined;
    for (const [signature, record] of [...this.#transactions].reverse()) {
      if (!started) {
        started = signature === before;
        continue;
      }
      if (!decodeWireTransaction(record.wire).message.staticAccounts.includes(address as never)) continue;
      found.push({ signature, slot: record.slot, blockTime: record.blockTime, err: record.err });
      if (found.length === limit) break;
    }
    return found;
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
