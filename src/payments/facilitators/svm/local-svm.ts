// Verifies and settles x402 "exact" Solana payments ourselves: our RPC, our fee payer, one network.
// The payer sends a v0 transaction signed by them as token authority, with our fee payer as account 0;
// we prove off-chain that it moves exactly the price to the payee and nothing of ours, then simulate it
// fee-payer-signed; settling sends it and polls its status. Works against any Solana RPC (the sandbox's
// or a real one) through @solana/kit, over the process's keep-alive pool (svm-rpc.ts).
//
// The RPCs of a paid call, and why each is there (docs/architecture.md, "The Solana settle path"):
//   verify:  simulateTransaction (the on-chain half of verification: balance, accounts, blockhash, fee payer
//            signature; its BlockhashNotFound is the expired-blockhash answer, so no isBlockhashValid before it)
//            and, beside it in parallel, getSignatureStatuses with history (an already-landed transaction is
//            refused as duplicate_settlement, which a simulation does not say).
//   settle:  sendTransaction, then getSignatureStatuses until confirmed (the first read at once: a cluster
//            that executed it on receipt answers at once; then a growing wait, bounded by confirmTimeoutMs).
//            isBlockhashValid only while the signature is unseen: once the blockhash is gone it never lands.
//   A settle after this process's own verify (the gate's path) does not verify again: the verified, signed
//   transaction is kept for it, and the RPC's preflight is then the one simulation that matters (see settle()).
import {
  createKeyPairSignerFromBytes,
  getAddressDecoder,
  getBase58Decoder,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  isAddress,
  isSolanaError,
  partiallySignTransaction,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Address,
  type Blockhash,
  type KeyPairSigner,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
  type Transaction,
} from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { SvmNetwork } from '../../../x402/networks.ts';
import { svmExactPayloadSchema } from '../../../x402/types.ts';
import type { PaymentProof, PaymentRequirement } from '../../../x402/model.ts';
import { FacilitatorUnavailableError, type Facilitator, type SettleOutcome, type VerifyResult } from '../../facilitator.ts';
import {
  checkExactSvmTransaction,
  DEFAULT_MAX_COMPUTE_UNIT_LIMIT,
  DEFAULT_MAX_COMPUTE_UNIT_PRICE,
  type DecodedPayment,
} from './svm-exact-checks.ts';
import { createKeepAliveSolanaRpc } from './svm-rpc.ts';
import { BLOCKHASH_EXPIRED, DUPLICATE_SETTLEMENT, INVALID_NETWORK, INVALID_PAYLOAD, INVALID_PAYMENT_REQUIREMENTS, INVALID_SCHEME, SETTLEMENT_CONFIRMATION_TIMEOUT, SETTLEMENT_PENDING, SETTLEMENT_UNAVAILABLE } from '../../reasons.ts';
import { INVALID_EXACT_SVM_FEE_PAYER_NOT_MANAGED_BY_FACILITATOR, INVALID_EXACT_SVM_PAYLOAD_SIGNATURE_INVALID, INVALID_EXACT_SVM_TRANSACTION_FAILED, INVALID_EXACT_SVM_TRANSACTION_SIMULATION_FAILED } from './exact-reasons.ts';

export { svmPaymentKey } from '../../../x402/payment-key.ts';

export interface LocalSvmFacilitatorOptions {
  network: SvmNetwork;
  rpcUrl: string;
  /** pays transaction fees; a kit signer, or the 64-byte secret key of a Solana CLI keypair */
  feePayer: KeyPairSigner | Uint8Array;
  /** the USDC mint this facilitator accepts */
  asset: string;
  /** micro-lamports per compute unit; default (and x402 cap) 5_000_000 = 5 lamports/CU */
  maxComputeUnitPrice?: bigint;
  /** default 200_000 */
  maxComputeUnitLimit?: number;
  /** how long settle() polls for confirmation before answering 'unknown' */
  confirmTimeoutMs: number;
  /** the first wait between status reads; default 400 ms (one slot); the sandbox wants ~20 */
  pollingIntervalMs?: number;
}

const USDC_DECIMALS = 6;
/**
 * How long settle() may rely on this process's verification of the same proof and requirement (instead of
 * verifying again). Well inside a blockhash's ~60-90 s life; the RPC's preflight checks again anyway.
 */
const VERIFIED_REUSE_MS = 60_000;
/** Confirmation polling backs off by half each read, up to this many polling intervals between reads. */
const MAX_POLL_INTERVALS = 4;

type Checked =
  | { ok: true; payment: DecodedPayment; signed: Transaction; signature: Signature }
  | { ok: false; reason: string; payer?: string };

const failed = (reason: string, payer?: string, transaction?: string): SettleOutcome => ({
  status: 'failed',
  reason,
  ...(payer === undefined ? {} : { payer }),
  ...(transaction === undefined ? {} : { transaction }),
});

/** Reads a Solana CLI keypair (JSON array of 64 numbers) or base58 of the 64 bytes. */
export function parseSvmSecretKey(text: string): Uint8Array {
  const trimmed = text.trim();
  // The parsers' own errors quote the input, which is the secret: only the expected form is ever said.
  let bytes: Uint8Array;
  if (trimmed.startsWith('[')) {
    let numbers: unknown;
    try {
      numbers = JSON.parse(trimmed);
    } catch {
      throw new Error('a Solana secret key in JSON form is an array of 64 numbers 0..255 (as solana-keygen writes); this is not valid JSON');
    }
    if (!Array.isArray(numbers) || !numbers.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
      throw new Error('a Solana secret key in JSON form is an array of 64 numbers 0..255 (as solana-keygen writes)');
    }
    bytes = Uint8Array.from(numbers as number[]);
  } else {
    try {
      bytes = new Uint8Array(getBase58Encoder().encode(trimmed));
    } catch {
      throw new Error('a Solana secret key is a JSON array of 64 numbers or a base58 string; this is neither');
    }
  }
  if (bytes.length !== 64) throw new Error(`a Solana secret key is 64 bytes (seed and public key); this one is ${bytes.length}`);
  return bytes;
}

export class LocalSvmFacilitator implements Facilitator {
  readonly #network: SvmNetwork;
  readonly #asset: string;
  readonly #maxPrice: bigint;
  readonly #maxLimit: number;
  readonly #confirmTimeoutMs: number;
  readonly #pollingIntervalMs: number;
  readonly #rpc: Rpc<SolanaRpcApi>;
  readonly #feePayerAddress: Address;
  readonly #signer: Promise<KeyPairSigner>;
  /** payments this process verified, with their signed transaction, for the settle() that follows */
  readonly #verified = new WeakMap<PaymentProof, { requirement: PaymentRequirement; checked: Checked & { ok: true }; at: number }>();

  constructor(options: LocalSvmFacilitatorOptions) {
    if (!isAddress(options.asset)) throw new Error(`invalid asset mint ${options.asset}`);
    this.#network = options.network;
    this.#asset = options.asset;
    this.#maxPrice = options.maxComputeUnitPrice ?? DEFAULT_MAX_COMPUTE_UNIT_PRICE;
    this.#maxLimit = options.maxComputeUnitLimit ?? DEFAULT_MAX_COMPUTE_UNIT_LIMIT;
    this.#confirmTimeoutMs = options.confirmTimeoutMs;
    this.#pollingIntervalMs = options.pollingIntervalMs ?? 400;
    this.#rpc = createKeepAliveSolanaRpc(options.rpcUrl);
    if (options.feePayer instanceof Uint8Array) {
      if (options.feePayer.length !== 64) throw new Error('the fee payer secret key must be 64 bytes');
      this.#feePayerAddress = getAddressDecoder().decode(options.feePayer.subarray(32));
      // kit checks that the public half matches the seed
      this.#signer = createKeyPairSignerFromBytes(options.feePayer);
      this.#signer.catch(() => undefined);
    } else {
      this.#feePayerAddress = options.feePayer.address;
      this.#signer = Promise.resolve(options.feePayer);
    }
  }

  /** The account that pays every settlement's fee. */
  get feePayer(): Address {
    return this.#feePayerAddress;
  }

  async requirementExtra(): Promise<Record<string, unknown>> {
    return { feePayer: this.#feePayerAddress };
  }

  async readinessProblems(payTo: string): Promise<string[]> {
    const problems: string[] = [];
    const network = this.#network.name;
    if (!isAddress(payTo)) return [`${network}: payTo ${payTo} is not a Solana address`];
    const [account] = await findAssociatedTokenPda({ owner: payTo, mint: this.#asset as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const { value: info } = await this.#rpc.getAccountInfo(account, { encoding: 'base64' }).send();
    if (!info) {
      problems.push(
        `${network}: payTo ${payTo} has no associated token account for mint ${this.#asset} (expected at ${account}); ` +
          `every payment will be refused until it exists: create it, e.g. spl-token create-account ${this.#asset} --owner ${payTo}`,
      );
    }
    const { value: lamports } = await this.#rpc.getBalance(this.#feePayerAddress).send();
    if (lamports === 0n) problems.push(`${network}: fee payer ${this.#feePayerAddress} has no SOL to pay transaction fees`);
    return problems;
  }

  async verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<VerifyResult> {
    const checked = await this.#verify(proof, requirement);
    if (checked.ok) {
      this.#verified.set(proof, { requirement, checked, at: Date.now() });
      return { isValid: true, payer: checked.payment.payer };
    }
    return checked.payer === undefined
      ? { isValid: false, invalidReason: checked.reason }
      : { isValid: false, invalidReason: checked.reason, payer: checked.payer };
  }

  async settle(proof: PaymentProof, requirement: PaymentRequirement): Promise<SettleOutcome> {
    // settle() never trusts that verify() ran: a payment this process did not verify moments ago with this
    // very requirement (the reconciler's, another caller's) is verified in full, simulation included. One it
    // did verify keeps that verification and its signed transaction (what it checked cannot have changed:
    // the proof and requirement are the same objects, nothing in them depends on the clock).
    const recent = this.#verified.get(proof);
    const reuse = recent !== undefined && recent.requirement === requirement && Date.now() - recent.at <= VERIFIED_REUSE_MS;
    let checked: Checked;
    try {
      checked = reuse ? recent.checked : await this.#verify(proof, requirement);
    } catch (error) {
      if (!(error instanceof FacilitatorUnavailableError)) throw error;
      return { status: 'unavailable', reason: `${SETTLEMENT_UNAVAILABLE}: the Solana RPC could not be reached` };
    }
    this.#verified.delete(proof);
    if (!checked.ok) return failed(checked.reason, checked.payer);
    const { payment, signed, signature } = checked;
    const payer = payment.payer;

    // The RPC's preflight is one more simulation. Right after our own full verify (milliseconds ago) it would
    // only repeat it: skipped. After a verification made before the work ran (perhaps seconds ago) it is
    // the check that matters: the payer may have moved the funds meanwhile, or the blockhash expired, and
    // a transaction that fails on chain still costs our fee payer its fee; preflight refuses it unsent
    // (blockhash_expired, or the simulation's failure) and nothing is charged.
    try {
      await this.#rpc
        .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', skipPreflight: !reuse, preflightCommitment: 'confirmed' })
        .send();
    } catch (error) {
      // The RPC answered with an error: the transaction was refused and can never land as sent.
      if (isSolanaError(error) && Number(error.context.__code) < 0) {
        return failed(reasonForRejection(error), payer);
      }
      // Transport failure: it may have reached the cluster; the status poll below decides.
    }
    return this.#confirm(signature, payment, Date.now() + this.#confirmTimeoutMs);
  }

  async checkSettlement(proof: PaymentProof, requirement: PaymentRequirement, transaction: string): Promise<SettleOutcome> {
    const parsed = svmExactPayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return failed(INVALID_PAYLOAD);
    // Even without a recorded signature it can be recomputed: ed25519 signing is deterministic.
    const checked = await this.#offChain(proof, requirement);
    if (!checked.ok) return failed(checked.reason, checked.payer, transaction || undefined);
    const signature = (transaction || checked.signature) as Signature;
    return this.#status(signature, checked.payment, true);
  }

  /**
   * Polls the signature's status until it is final either way or the deadline passes: the first read at once
   * (a cluster that executes on receipt, like the sandbox, has answered by then), then waits growing by half
   * from the polling interval up to MAX_POLL_INTERVALS of it, the last one cut to the deadline.
   */
  async #confirm(signature: Signature, payment: DecodedPayment, deadline: number): Promise<SettleOutcome> {
    const longest = this.#pollingIntervalMs * MAX_POLL_INTERVALS;
    for (let wait = this.#pollingIntervalMs; ; wait = Math.min(longest, wait * 1.5)) {
      const outcome = await this.#status(signature, payment, false);
      const left = deadline - Date.now();
      if (outcome.status !== 'unknown' || left <= 0) {
        return outcome.status === 'unknown' ? { ...outcome, reason: SETTLEMENT_CONFIRMATION_TIMEOUT } : outcome;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, left)));
    }
  }

  async #status(signature: Signature, payment: DecodedPayment, history: boolean): Promise<SettleOutcome> {
    const payer = payment.payer;
    try {
      const read = async () =>
        (await this.#rpc.getSignatureStatuses([signature], { searchTransactionHistory: history }).send()).value[0];
      let status = await read();
      if (!status) {
        // Not seen. Once its blockhash has expired it never will be: certainly not settled. The status
        // is read again after the blockhash so a landing in between is not missed.
        const { value: valid } = await this.#rpc.isBlockhashValid(payment.blockhash as Blockhash, { commitment: 'confirmed' }).send();
        if (valid) return { status: 'unknown', reason: SETTLEMENT_PENDING, payer, transaction: signature };
        status = await read();
        if (!status) return failed(BLOCKHASH_EXPIRED, payer, signature);
      }
      if (status.err) return failed(INVALID_EXACT_SVM_TRANSACTION_FAILED, payer, signature);
      if (status.confirmationStatus === 'processed') return { status: 'unknown', reason: SETTLEMENT_PENDING, payer, transaction: signature };
      return { status: 'settled', transaction: signature, payer };
    } catch (error) {
      return { status: 'unknown', reason: `rpc_unavailable: ${error instanceof Error ? error.message : String(error)}`, payer, transaction: signature };
    }
  }

  /** Every check of verify(), off-chain then on-chain; returns the fee-payer-signed transaction. */
  async #verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<Checked> {
    const checked = await this.#offChain(proof, requirement);
    if (!checked.ok) return checked;
    const payer = checked.payment.payer;
    try {
      // Both at once: neither depends on the other. The simulation also answers for the blockhash.
      const [{ value: statuses }, { value: simulation }] = await Promise.all([
        this.#rpc.getSignatureStatuses([checked.signature], { searchTransactionHistory: true }).send(),
        this.#rpc
          .simulateTransaction(getBase64EncodedWireTransaction(checked.signed), {
            encoding: 'base64',
            sigVerify: true,
            replaceRecentBlockhash: false,
            commitment: 'confirmed',
          })
          .send(),
      ]);
      if (statuses[0]) return { ok: false, reason: DUPLICATE_SETTLEMENT, payer };
      if (simulation.err) {
        if (simulation.err === 'BlockhashNotFound') return { ok: false, reason: BLOCKHASH_EXPIRED, payer };
        if (simulation.err === 'AlreadyProcessed') return { ok: false, reason: DUPLICATE_SETTLEMENT, payer };
        return { ok: false, reason: INVALID_EXACT_SVM_TRANSACTION_SIMULATION_FAILED, payer };
      }
    } catch (error) {
      // A sigVerify failure is the RPC's own error; anything else: no verdict on the payment (the RPC failed us).
      if (isSolanaError(error) && Number(error.context.__code) === -32003) {
        return { ok: false, reason: INVALID_EXACT_SVM_PAYLOAD_SIGNATURE_INVALID, payer };
      }
      throw new FacilitatorUnavailableError(`${this.#network.name} verification`, error);
    }
    return checked;
  }

  async #offChain(proof: PaymentProof, requirement: PaymentRequirement): Promise<Checked> {
    if (proof.scheme !== 'exact' || requirement.scheme !== 'exact') return { ok: false, reason: INVALID_SCHEME };
    if (proof.network !== requirement.network || requirement.network !== this.#network.name) {
      return { ok: false, reason: INVALID_NETWORK };
    }
    const parsed = svmExactPayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return { ok: false, reason: INVALID_PAYLOAD };
    if (requirement.amount < 0n || requirement.amount >= 2n ** 64n || !isAddress(requirement.payTo)) {
      return { ok: false, reason: INVALID_PAYMENT_REQUIREMENTS };
    }
    if (requirement.asset !== this.#asset) return { ok: false, reason: 'asset_mismatch' };
    const extraFeePayer = requirement.extra.feePayer;
    if (extraFeePayer !== undefined && extraFeePayer !== this.#feePayerAddress) {
      return { ok: false, reason: INVALID_EXACT_SVM_FEE_PAYER_NOT_MANAGED_BY_FACILITATOR };
    }
    const memo = requirement.extra.memo;
    const check = await checkExactSvmTransaction(parsed.data.transaction, {
      feePayer: this.#feePayerAddress,
      asset: requirement.asset,
      payTo: requirement.payTo,
      amount: requirement.amount,
      decimals: USDC_DECIMALS,
      maxComputeUnitPrice: this.#maxPrice,
      maxComputeUnitLimit: this.#maxLimit,
      ...(typeof memo === 'string' && memo !== '' ? { memo } : {}),
    });
    if (!check.ok) return check.payer === undefined ? { ok: false, reason: check.reason } : { ok: false, reason: check.reason, payer: check.payer };

    const signer = await this.#signer;
    const signed = await partiallySignTransaction([signer.keyPair], check.payment.transaction);
    // The transaction's id is the fee payer's signature, the first one.
    const signature = getBase58Decoder().decode(signed.signatures[this.#feePayerAddress]!) as Signature;
    return { ok: true, payment: check.payment, signed, signature };
  }
}

function reasonForRejection(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) return BLOCKHASH_EXPIRED;
  if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) return DUPLICATE_SETTLEMENT;
  if (isSolanaError(error) && Number(error.context.__code) === -32003) return INVALID_EXACT_SVM_PAYLOAD_SIGNATURE_INVALID;
  return INVALID_EXACT_SVM_TRANSACTION_FAILED;
}
