// Accounts as a Solana RPC returns them (getAccountInfo, getMultipleAccounts): base64, base58, or
// jsonParsed for SPL Token mints and token accounts (anything unparseable falls back to base64, as a
// validator does).
import type { LiteSVM } from 'litesvm';
import { address, getBase58Decoder, type Address } from '@solana/kit';
import { getMintDecoder, getMintSize, getTokenDecoder, getTokenSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

/** What rent-exempt accounts report; kit reads it as a u64. */
const RENT_EPOCH_MAX = 18446744073709551615n;
export const TOKEN_2022_PROGRAM_ADDRESS = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');

export type AccountEncoding = 'base64' | 'base58' | 'jsonParsed';

export interface DataSlice {
  offset: number;
  length: number;
}

export function tokenAmountJson(amount: bigint, decimals: number) {
  const scale = 10n ** BigInt(decimals);
  const whole = amount / scale;
  const fraction = (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole.toString();
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM_ADDRESS || owner === TOKEN_2022_PROGRAM_ADDRESS;
}

/** Reads a mint's decimals, or undefined when the address holds no (classic-sized) mint. */
export function mintDecimals(svm: LiteSVM, mint: Address): number | undefined {
  const account = svm.getAccount(mint);
  if (!account.exists || !isTokenProgram(account.programAddress) || account.data.length < getMintSize()) return undefined;
  return getMintDecoder().decode(account.data).decimals;
}

/** A token account with the token program that owns it, or undefined when the address holds none. */
function tokenAccount(svm: LiteSVM, at: Address) {
  const account = svm.getAccount(at);
  if (!account.exists || !isTokenProgram(account.programAddress) || account.data.length < getTokenSize()) return undefined;
  return { programId: account.programAddress, token: getTokenDecoder().decode(account.data) };
}

/** A token account's (mint, owner, amount), or undefined when the address holds none. */
export function readTokenAccount(svm: LiteSVM, at: Address) {
  return tokenAccount(svm, at)?.token;
}

export type TokenBalanceJson = NonNullable<ReturnType<typeof tokenBalanceJson>>;

/**
 * An entry of a transaction's pre/postTokenBalances, or undefined when the address holds no token
 * account (or its mint is gone: a validator then leaves the entry out too).
 */
export function tokenBalanceJson(svm: LiteSVM, at: Address, accountIndex: number) {
  const found = tokenAccount(svm, at);
  const decimals = found && mintDecimals(svm, found.token.mint);
  if (!found || decimals === undefined) return undefined;
  const { programId, token } = found;
  return { accountIndex, mint: token.mint, owner: token.owner, programId, uiTokenAmount: tokenAmountJson(token.amount, decimals) };
}

function parsed(svm: LiteSVM, owner: string, data: Uint8Array): unknown {
  if (!isTokenProgram(owner)) return undefined;
  const program = owner === TOKEN_PROGRAM_ADDRESS ? 'spl-token' : 'spl-token-2022';
  const option = (value: { __option: string; value?: unknown }) => (value.__option === 'Some' ? String(value.value) : null);
  if (data.length === getMintSize()) {
    const mint = getMintDecoder().decode(data);
    return {
      program,
      space: data.length,
      parsed: {
        type: 'mint',
        info: {
          decimals: mint.decimals,
          freezeAuthority: option(mint.freezeAuthority),
          isInitialized: mint.isInitialized,
          mintAuthority: option(mint.mintAuthority),
          supply: mint.supply.toString(),
        },
      },
    };
  }
  if (data.length >= getTokenSize()) {
    const token = getTokenDecoder().decode(data);
    const decimals = mintDecimals(svm, token.mint) ?? 0;
    const state = ['uninitialized', 'initialized', 'frozen'][token.state] ?? 'initialized';
    return {
      program,
      space: data.length,
      parsed: {
        type: 'account',
        info: {
          isNative: token.isNative.__option === 'Some',
          mint: token.mint,
          owner: token.owner,
          state,
          tokenAmount: tokenAmountJson(token.amount, decimals),
        },
      },
    };
  }
  return undefined;
}

/** The RPC's account object, or null when nothing lives at the address. */
export function accountJson(svm: LiteSVM, at: string, encoding: AccountEncoding, slice?: DataSlice) {
  const account = svm.getAccount(address(at));
  if (!account.exists) return null;
  const full = account.data;
  const data = slice ? full.subarray(slice.offset, slice.offset + slice.length) : full;
  const common = {
    executable: account.executable,
    lamports: account.lamports,
    owner: account.programAddress,
    rentEpoch: RENT_EPOCH_MAX,
    space: full.length,
  };
  if (encoding === 'jsonParsed' && !slice) {
    const json = parsed(svm, account.programAddress, full);
    if (json) return { ...common, data: json };
  }
  if (encoding === 'base58') return { ...common, data: [getBase58Decoder().decode(data), 'base58'] };
  return { ...common, data: [Buffer.from(data).toString('base64'), 'base64'] };
}
