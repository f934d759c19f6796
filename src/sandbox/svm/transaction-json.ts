// getTransaction's answer in a validator's shapes (field names, and which fields each encoding has),
// built from what SvmChain recorded when the transaction landed.
// Not covered: address lookup tables are not resolved (loadedAddresses is empty and balances cover the
// static account keys only; sandbox payments use none), and jsonParsed does not parse instructions
// into { program, parsed }: every instruction comes back in the partially decoded form
// ({ programId, accounts, data }) that a validator uses for programs it has no parser for.
import { getBase58Decoder, type CompiledTransactionMessage } from '@solana/kit';
import { decodeWireTransaction, type TransactionRecord } from './svm-chain.ts';

export type TransactionEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

const base58 = getBase58Decoder();

export function isTransactionEncoding(value: unknown): value is TransactionEncoding {
  return value === 'json' || value === 'jsonParsed' || value === 'base64' || value === 'base58';
}

export function transactionVersion(record: TransactionRecord): 'legacy' | 0 {
  return decodeWireTransaction(record.wire).message.version;
}

/** Which static account keys sign and which are writable, from the message header. */
function roles(message: CompiledTransactionMessage, index: number) {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const signer = index < numSignerAccounts;
  const writable = signer
    ? index < numSignerAccounts - numReadonlySignerAccounts
    : index < message.staticAccounts.length - numReadonlyNonSignerAccounts;
  return { signer, writable };
}

/** The message's own fields (v0 messages carry addressTableLookups, legacy ones do not have the field). */
function messageJson(message: CompiledTransactionMessage & { lifetimeToken: string }, parsed: boolean) {
  const keys = message.staticAccounts;
  const instructions = message.instructions.map((ix) => {
    const accounts = ix.accountIndices ?? [];
    const data = base58.decode(ix.data ?? new Uint8Array());
    return parsed
      ? { programId: keys[ix.programAddressIndex], accounts: accounts.map((i) => keys[i]), data, stackHeight: null }
      : { programIdIndex: ix.programAddressIndex, accounts, data, stackHeight: null };
  });
  const lookups =
    message.version === 'legacy'
      ? {}
      : {
          addressTableLookups: (message.addressTableLookups ?? []).map((l) => ({
            accountKey: l.lookupTableAddress,
            writableIndexes: l.writableIndexes,
            readonlyIndexes: l.readonlyIndexes,
          })),
        };
  if (parsed) {
    const accountKeys = keys.map((pubkey, i) => ({ pubkey, ...roles(message, i), source: 'transaction' }));
    return { accountKeys, recentBlockhash: message.lifetimeToken, instructions, ...lookups };
  }
  const header = {
    numRequiredSignatures: message.header.numSignerAccounts,
    numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
    numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
  };
  return { accountKeys: keys, header, recentBlockhash: message.lifetimeToken, instructions, ...lookups };
}

/**
 * The result of getTransaction. `version` is present only when the client sent
 * maxSupportedTransactionVersion (old clients do not know the field, so a validator leaves it out).
 */
export function transactionResponse(record: TransactionRecord, encoding: TransactionEncoding, withVersion: boolean) {
  const { transaction, message } = decodeWireTransaction(record.wire);
  const parsed = encoding === 'jsonParsed';
  const keys = message.staticAccounts;
  const signatures = Object.values(transaction.signatures).map((s) => base58.decode(s ?? new Uint8Array(64)));
  const encoded =
    encoding === 'base64'
      ? [Buffer.from(record.wire).toString('base64'), 'base64']
      : encoding === 'base58'
        ? [base58.decode(record.wire), 'base58']
        : { signatures, message: messageJson(message, parsed) };
  const innerInstructions = record.innerInstructions.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map(({ programIdIndex, accounts, data, stackHeight }) =>
      parsed
        ? { programId: keys[programIdIndex], accounts: accounts.map((i) => keys[i]), data: base58.decode(data), stackHeight }
        : { programIdIndex, accounts, data: base58.decode(data), stackHeight },
    ),
  }));
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    ...(withVersion ? { version: message.version } : {}),
    transaction: encoded,
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      preBalances: record.preBalances,
      postBalances: record.postBalances,
      innerInstructions,
      logMessages: record.logs,
      preTokenBalances: record.preTokenBalances,
      postTokenBalances: record.postTokenBalances,
      rewards: [],
      // a validator's jsonParsed meta has no loadedAddresses (they are in accountKeys with source 'lookupTable')
      ...(parsed ? {} : { loadedAddresses: { writable: [], readonly: [] } }),
      computeUnitsConsumed: record.unitsConsumed,
    },
  };
}
