// The off-chain half of verifying an x402 "exact" Solana payment: decode the partially signed v0
// transaction and prove, without asking the chain anything, that signing it as fee payer can only move
// exactly the price, of the right mint, to the payee's token account, at a bounded fee.
// Reason strings are the x402 reference facilitator's where one exists.
import {
  getAddressEncoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  verifySignature,
  type Address,
  type Transaction,
} from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { INVALID_EXACT_SVM_FEE_PAYER_MISMATCH, INVALID_EXACT_SVM_PAYLOAD_ADDRESS_LOOKUP_TABLES_UNSUPPORTED, INVALID_EXACT_SVM_PAYLOAD_AMOUNT_MISMATCH, INVALID_EXACT_SVM_PAYLOAD_DECIMALS_MISMATCH, INVALID_EXACT_SVM_PAYLOAD_EXCESSIVE_SIGNERS, INVALID_EXACT_SVM_PAYLOAD_MEMO_COUNT, INVALID_EXACT_SVM_PAYLOAD_MEMO_MISMATCH, INVALID_EXACT_SVM_PAYLOAD_MINT_MISMATCH, INVALID_EXACT_SVM_PAYLOAD_NO_TRANSFER_INSTRUCTION, INVALID_EXACT_SVM_PAYLOAD_RECIPIENT_MISMATCH, INVALID_EXACT_SVM_PAYLOAD_SIGNATURE_INVALID, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_COULD_NOT_BE_DECODED, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_FEE_PAYER_TRANSFERRING_FUNDS, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_LIMIT_INSTRUCTION, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_LIMIT_INSTRUCTION_TOO_HIGH, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_PRICE_INSTRUCTION, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_PRICE_INSTRUCTION_TOO_HIGH, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_LENGTH, INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_VERSION, INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_FIFTH_INSTRUCTION, INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_FOURTH_INSTRUCTION, INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_OPTIONAL_INSTRUCTION, INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_SIXTH_INSTRUCTION } from './exact-reasons.ts';

export const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const COMPUTE_BUDGET_PROGRAM_ADDRESS = 'ComputeBudget111111111111111111111111111111';
export const MEMO_PROGRAM_ADDRESS = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
/** Wallets such as Phantom append Lighthouse assertions to every transaction they sign. */
export const LIGHTHOUSE_PROGRAM_ADDRESS = 'L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95';

/** 5 lamports per compute unit: the x402 reference cap on the priority fee our fee payer pays. */
export const DEFAULT_MAX_COMPUTE_UNIT_PRICE = 5_000_000n;
/** A TransferChecked plus memos needs ~10k CU; the cap bounds what a payer can make us spend. */
export const DEFAULT_MAX_COMPUTE_UNIT_LIMIT = 200_000;

const TRANSFER_CHECKED = 12;
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
/** Payees' token accounts remembered (an address derivation is ~0.25 ms of hashing; a gateway has a few payees). */
const PAYEE_ACCOUNTS_CACHED = 64;
const payeeAccounts = new Map<string, Promise<Address>>();

/** The payee's associated token account: derived once per (mint, owner, token program), a pure function of them. */
function payeeTokenAccount(mint: Address, owner: Address, tokenProgram: Address): Promise<Address> {
  const key = `${mint}:${owner}:${tokenProgram}`;
  let account = payeeAccounts.get(key);
  if (!account) {
    if (payeeAccounts.size >= PAYEE_ACCOUNTS_CACHED) payeeAccounts.delete(payeeAccounts.keys().next().value!);
    account = findAssociatedTokenPda({ mint, owner, tokenProgram }).then(([address]) => address);
    account.catch(() => payeeAccounts.delete(key));
    payeeAccounts.set(key, account);
  }
  return account;
}

const OPTIONAL_INSTRUCTION_REASONS = [
  INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_FOURTH_INSTRUCTION,
  INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_FIFTH_INSTRUCTION,
  INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_SIXTH_INSTRUCTION,
];

export interface ExactSvmExpectations {
  feePayer: Address;
  asset: string;
  payTo: string;
  amount: bigint;
  decimals: number;
  maxComputeUnitPrice: bigint;
  maxComputeUnitLimit: number;
  /** requirements.extra.memo, when the server asked for one */
  memo?: string;
}

export interface DecodedPayment {
  transaction: Transaction;
  blockhash: string;
  /** the transfer authority: the one who pays */
  payer: Address;
}

export type PaymentCheck = { ok: true; payment: DecodedPayment } | { ok: false; reason: string; payer?: string };

const fail = (reason: string, payer?: string): PaymentCheck => (payer === undefined ? { ok: false, reason } : { ok: false, reason, payer });

/** Standard base64 of one complete wire transaction, or undefined. */
export function decodeTransaction(base64: string): Transaction | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  try {
    const bytes = new Uint8Array(Buffer.from(base64, 'base64'));
    const [transaction, end] = getTransactionDecoder().read(bytes, 0);
    return end === bytes.length ? transaction : undefined;
  } catch {
    return undefined;
  }
}

async function signatureValid(signer: Address, signature: unknown, message: unknown): Promise<boolean> {
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return false;
  try {
    const key = await crypto.subtle.importKey('raw', new Uint8Array(getAddressEncoder().encode(signer)), 'Ed25519', false, ['verify']);
    return await verifySignature(key, signature as never, message as never);
  } catch {
    return false;
  }
}

export async function checkExactSvmTransaction(base64: string, expected: ExactSvmExpectations): Promise<PaymentCheck> {
  const transaction = decodeTransaction(base64);
  if (!transaction) return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_COULD_NOT_BE_DECODED);
  let message;
  try {
    message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  } catch {
    return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_COULD_NOT_BE_DECODED);
  }
  if (message.version !== 0) return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_VERSION);
  // Accounts behind lookup tables cannot be checked without trusting the table: not accepted.
  if ((message.addressTableLookups ?? []).length > 0) return fail(INVALID_EXACT_SVM_PAYLOAD_ADDRESS_LOOKUP_TABLES_UNSUPPORTED);

  const accounts = message.staticAccounts;
  if (accounts[0] !== expected.feePayer) return fail(INVALID_EXACT_SVM_FEE_PAYER_MISMATCH);

  const instructions = message.instructions;
  if (instructions.length < 3 || instructions.length > 6) return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_LENGTH);
  const programOf = (i: number) => accounts[instructions[i]!.programAddressIndex];
  const dataOf = (i: number): Uint8Array => (instructions[i]!.data as Uint8Array | undefined) ?? new Uint8Array();
  const view = (data: Uint8Array) => new DataView(data.buffer, data.byteOffset, data.byteLength);

  const limit = dataOf(0);
  if (programOf(0) !== COMPUTE_BUDGET_PROGRAM_ADDRESS || limit[0] !== SET_COMPUTE_UNIT_LIMIT || limit.length !== 5) {
    return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_LIMIT_INSTRUCTION);
  }
  if (view(limit).getUint32(1, true) > expected.maxComputeUnitLimit) {
    return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_LIMIT_INSTRUCTION_TOO_HIGH);
  }
  const price = dataOf(1);
  if (programOf(1) !== COMPUTE_BUDGET_PROGRAM_ADDRESS || price[0] !== SET_COMPUTE_UNIT_PRICE || price.length !== 9) {
    return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_PRICE_INSTRUCTION);
  }
  if (view(price).getBigUint64(1, true) > expected.maxComputeUnitPrice) {
    return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_INSTRUCTIONS_COMPUTE_PRICE_INSTRUCTION_TOO_HIGH);
  }

  // TransferChecked: [source, mint, destination, authority], data = 12, u64 amount, u8 decimals.
  // One authority and no multisig signers: the authority is who pays.
  const tokenProgram = programOf(2);
  const transfer = dataOf(2);
  const transferAccounts = (instructions[2]!.accountIndices ?? []).map((i) => accounts[i]);
  if (
    (tokenProgram !== TOKEN_PROGRAM_ADDRESS && tokenProgram !== TOKEN_2022_PROGRAM_ADDRESS) ||
    transfer[0] !== TRANSFER_CHECKED ||
    transfer.length !== 10 ||
    transferAccounts.length !== 4 ||
    transferAccounts.some((a) => a === undefined)
  ) {
    return fail(INVALID_EXACT_SVM_PAYLOAD_NO_TRANSFER_INSTRUCTION);
  }
  const [, mint, destination, authority] = transferAccounts as Address[];
  const payer = authority!;

  // Our fee payer signs the whole transaction, so it must not be an account of any instruction:
  // as source or authority it would pay the price itself; elsewhere it could be drained some other way.
  for (const ix of instructions) {
    if ((ix.accountIndices ?? []).some((i) => accounts[i] === expected.feePayer)) {
      return fail(INVALID_EXACT_SVM_PAYLOAD_TRANSACTION_FEE_PAYER_TRANSFERRING_FUNDS, payer);
    }
  }
  if (mint !== expected.asset) return fail(INVALID_EXACT_SVM_PAYLOAD_MINT_MISMATCH, payer);
  const expectedDestination = await payeeTokenAccount(expected.asset as Address, expected.payTo as Address, tokenProgram as Address);
  if (destination !== expectedDestination) return fail(INVALID_EXACT_SVM_PAYLOAD_RECIPIENT_MISMATCH, payer);
  if (view(transfer).getBigUint64(1, true) !== expected.amount) return fail(INVALID_EXACT_SVM_PAYLOAD_AMOUNT_MISMATCH, payer);
  if (transfer[9] !== expected.decimals) return fail(INVALID_EXACT_SVM_PAYLOAD_DECIMALS_MISMATCH, payer);

  const memos: Uint8Array[] = [];
  for (let i = 3; i < instructions.length; i++) {
    const program = programOf(i);
    if (program === MEMO_PROGRAM_ADDRESS) memos.push(dataOf(i));
    else if (program !== LIGHTHOUSE_PROGRAM_ADDRESS) {
      return fail(OPTIONAL_INSTRUCTION_REASONS[i - 3] ?? INVALID_EXACT_SVM_PAYLOAD_UNKNOWN_OPTIONAL_INSTRUCTION, payer);
    }
  }
  if (expected.memo !== undefined) {
    if (memos.length !== 1) return fail(INVALID_EXACT_SVM_PAYLOAD_MEMO_COUNT, payer);
    if (new TextDecoder().decode(memos[0]) !== expected.memo) return fail(INVALID_EXACT_SVM_PAYLOAD_MEMO_MISMATCH, payer);
  }

  // Signers are exactly our fee payer (signs at settlement) and the payer, whose signature must verify.
  const signers = accounts.slice(0, message.header.numSignerAccounts);
  if (signers.length > 2) return fail(INVALID_EXACT_SVM_PAYLOAD_EXCESSIVE_SIGNERS, payer);
  if (signers[1] !== payer) return fail(INVALID_EXACT_SVM_PAYLOAD_SIGNATURE_INVALID, payer);
  if (!(await signatureValid(payer, transaction.signatures[payer], transaction.messageBytes))) {
    return fail(INVALID_EXACT_SVM_PAYLOAD_SIGNATURE_INVALID, payer);
  }
  return { ok: true, payment: { transaction, blockhash: message.lifetimeToken, payer } };
}
