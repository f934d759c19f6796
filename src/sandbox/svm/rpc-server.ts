// The answers of a Solana JSON-RPC 2.0 endpoint over an SvmChain (json-rpc-listener.ts serves them over HTTP).
// It serves what @solana/kit clients, the official x402 payers and our facilitator call, with the
// shapes and error codes of a real validator's RPC, so code tested here runs unchanged against one.
import { address, getBase58Decoder, getBase58Encoder, getCompiledTransactionMessageDecoder, isAddress } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { SvmChain } from './svm-chain.ts';
import { feeForMessage, TransactionRejected } from './svm-chain.ts';
import {
  accountJson,
  mintDecimals,
  readTokenAccount,
  tokenAmountJson,
  TOKEN_2022_PROGRAM_ADDRESS,
  type AccountEncoding,
  type DataSlice,
} from './account-json.ts';
import { describeTransactionError } from './transaction-error.ts';
import { internalError, type JsonRpcAnswer, type JsonRpcRequest } from './json-rpc-listener.ts';
import { isTransactionEncoding, transactionResponse, transactionVersion } from './transaction-json.ts';

export interface RpcAnswerOptions {
  chain: SvmChain;
  /** the network's real genesis hash, so clients that check it see the network they expect */
  genesisHash: string;
  /** the token mints this sandbox created (its test USDC): what a programId-filtered token account query covers */
  mints: string[];
}

class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const invalidParams = (message: string) => new RpcError(-32602, `Invalid params: ${message}`);

function config(params: unknown[], index: number): Record<string, unknown> {
  const value = params[index];
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function addressParam(params: unknown[], index: number): string {
  const value = params[index];
  if (typeof value !== 'string' || !isAddress(value)) throw invalidParams(`param ${index} is not a base58 address`);
  return value;
}

function wireParam(params: unknown[], encoding: unknown): Uint8Array {
  const value = params[0];
  if (typeof value !== 'string') throw invalidParams('transaction must be a string');
  // A validator's default wire encoding for transactions is base58.
  if (encoding === 'base64') return new Uint8Array(Buffer.from(value, 'base64'));
  if (encoding === undefined || encoding === 'base58') return new Uint8Array(getBase58Encoder().encode(value));
  throw invalidParams(`unsupported encoding ${String(encoding)}`);
}

function accountEncoding(cfg: Record<string, unknown>): AccountEncoding {
  const encoding = cfg.encoding ?? 'base58';
  if (encoding === 'base64' || encoding === 'base58' || encoding === 'jsonParsed') return encoding;
  throw invalidParams(`unsupported account encoding ${String(encoding)} (this sandbox serves base64, base58, jsonParsed)`);
}

function dataSlice(cfg: Record<string, unknown>): DataSlice | undefined {
  const slice = cfg.dataSlice as { offset?: unknown; length?: unknown } | undefined;
  if (!slice) return undefined;
  return { offset: Number(slice.offset ?? 0), length: Number(slice.length ?? 0) };
}

type Handler = (params: unknown[]) => unknown;

function handlers({ chain, genesisHash, mints }: RpcAnswerOptions): Record<string, Handler> {
  const svm = chain.svm;
  const context = () => ({ slot: chain.slot(), apiVersion: '2.2.0' });
  const withContext = (value: unknown) => ({ context: context(), value });

  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 3294202862 }),
    getGenesisHash: () => genesisHash,
    getSlot: () => chain.slot(),
    getBlockHeight: () => chain.blockHeight(),
    getEpochInfo: () => {
      const slot = chain.slot();
      return { absoluteSlot: slot, blockHeight: slot, epoch: slot / 432_000n, slotIndex: slot % 432_000n, slotsInEpoch: 432_000n, transactionCount: null };
    },
    getLatestBlockhash: () => withContext(chain.latestBlockhash()),
    isBlockhashValid: (params) => {
      if (typeof params[0] !== 'string') throw invalidParams('blockhash must be a string');
      return withContext(chain.isBlockhashValid(params[0]));
    },
    getMinimumBalanceForRentExemption: (params) => svm.minimumBalanceForRentExemption(BigInt(Number(params[0] ?? 0))),
    getBalance: (params) => withContext(svm.getBalance(address(addressParam(params, 0)) as never) ?? 0n),
    getAccountInfo: (params) => {
      const cfg = config(params, 1);
      return withContext(accountJson(svm, addressParam(params, 0), accountEncoding(cfg), dataSlice(cfg)));
    },
    getMultipleAccounts: (params) => {
      if (!Array.isArray(params[0])) throw invalidParams('expected an array of addresses');
      const cfg = config(params, 1);
      const addresses = params[0].map((_, i) => addressParam(params[0] as unknown[], i));
      return withContext(addresses.map((a) => accountJson(svm, a, accountEncoding(cfg), dataSlice(cfg))));
    },
    getTokenAccountBalance: (params) => {
      const token = readTokenAccount(svm, address(addressParam(params, 0)) as never);
      if (!token) throw invalidParams('Invalid param: not a Token account');
      return withContext(tokenAmountJson(token.amount, mintDecimals(svm, token.mint as never) ?? 0));
    },
    // litesvm cannot list accounts by owner; every token account the sandbox makes is an associated one,
    // so the owner's associated accounts for the mint(s) asked about are all there is.
    getTokenAccountsByOwner: async (params) => {
      const owner = address(addressParam(params, 0));
      const filter = config(params, 1);
      const cfg = config(params, 2);
      const wanted = typeof filter.mint === 'string' ? [filter.mint] : typeof filter.programId === 'string' ? mints : undefined;
      if (!wanted) throw invalidParams('filter must be { mint } or { programId }');
      const programs = typeof filter.programId === 'string' ? [filter.programId] : [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS];
      const found = [];
      for (const mint of wanted.filter((m) => isAddress(m))) {
        for (const tokenProgram of programs.filter((p) => isAddress(p))) {
          const [pubkey] = await findAssociatedTokenPda({ owner, mint: address(mint), tokenProgram: address(tokenProgram) });
          if (readTokenAccount(svm, pubkey as never)?.owner !== owner) continue;
          found.push({ pubkey, account: accountJson(svm, pubkey, accountEncoding(cfg), dataSlice(cfg)) });
        }
      }
      return withContext(found);
    },
    getFeeForMessage: (params) => {
      if (typeof params[0] !== 'string') throw invalidParams('message must be a base64 string');
      const bytes = new Uint8Array(Buffer.from(params[0], 'base64'));
      const message = getCompiledTransactionMessageDecoder().decode(bytes);
      // A validator answers null for a message whose blockhash it no longer knows.
      return withContext(chain.isBlockhashValid(message.lifetimeToken) ? feeForMessage(message) : null);
    },
    simulateTransaction: (params) => {
      const cfg = config(params, 1);
      const sigVerify = cfg.sigVerify === true;
      const replaceRecentBlockhash = cfg.replaceRecentBlockhash === true;
      if (sigVerify && replaceRecentBlockhash) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
      const wire = wireParam(params, cfg.encoding);
      const result = decodeOrThrow(() => chain.simulate(wire, { sigVerify, replaceRecentBlockhash }));
      if (sigVerify && result.err === 'SignatureFailure') throw new RpcError(-32003, 'Transaction signature verification failure');
      return withContext({
        err: result.err,
        logs: result.logs,
        accounts: null,
        unitsConsumed: result.unitsConsumed,
        returnData: null,
        innerInstructions: null,
        replacementBlockhash: replaceRecentBlockhash ? chain.latestBlockhash() : null,
      });
    },
    sendTransaction: (params) => {
      const cfg = config(params, 1);
      const wire = wireParam(params, cfg.encoding);
      try {
        return decodeOrThrow(() => chain.send(wire, { skipPreflight: cfg.skipPreflight === true }));
      } catch (error) {
        if (!(error instanceof TransactionRejected)) throw error;
        if (error.err === 'SignatureFailure') throw new RpcError(-32003, 'Transaction signature verification failure');
        throw new RpcError(-32002, `Transaction simulation failed: ${describeTransactionError(error.err)}`, {
          err: error.err,
          logs: error.result.logs,
          accounts: null,
          unitsConsumed: error.result.unitsConsumed,
          returnData: null,
          innerInstructions: null,
        });
      }
    },
    getSignaturesForAddress: (params) => {
      const owner = addressParam(params, 0);
      const cfg = config(params, 1);
      const limit = cfg.limit === undefined ? 1000 : Number(cfg.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidParams('limit must be between 1 and 1000');
      if (cfg.before !== undefined && typeof cfg.before !== 'string') throw invalidParams('before must be a base58 signature');
      return chain
        .signaturesFor(owner, { limit, ...(cfg.before === undefined ? {} : { before: cfg.before as string }) })
        .map(({ signature, slot, blockTime, err }) => ({ signature, slot, err, memo: null, blockTime, confirmationStatus: chain.signatureStatus(signature)?.confirmationStatus ?? 'confirmed' }));
    },
    getSignatureStatuses: (params) => {
      if (!Array.isArray(params[0])) throw invalidParams('expected an array of signatures');
      return withContext(
        params[0].map((signature) => {
          const status = typeof signature === 'string' ? chain.signatureStatus(signature) : null;
          return status && { ...status, status: status.err === null ? { Ok: null } : { Err: status.err } };
        }),
      );
    },
    getTransaction: (params) => {
      const signature = params[0];
      if (typeof signature !== 'string') throw invalidParams('signature must be a base58 string');
      const cfg = config(params, 1);
      const encoding = cfg.encoding ?? 'json';
      if (!isTransactionEncoding(encoding)) throw invalidParams(`unsupported encoding ${String(encoding)}`);
      // As on a validator: finalized is the default, and processed is refused.
      const commitment = cfg.commitment ?? 'finalized';
      if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
      const record = chain.transaction(signature);
      // An unknown signature is null; so is one not yet finalized when finalized is asked for.
      if (!record) return null;
      if (commitment === 'finalized' && chain.signatureStatus(signature)?.confirmationStatus !== 'finalized') return null;
      const max = cfg.maxSupportedTransactionVersion;
      const version = transactionVersion(record);
      if (version !== 'legacy' && (typeof max !== 'number' || max < version)) {
        throw new RpcError(
          -32015,
          `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
        );
      }
      return transactionResponse(record, encoding, typeof max === 'number');
    },
    requestAirdrop: (params) => {
      const to = address(addressParam(params, 0));
      const lamports = BigInt(Number(params[1] ?? 0));
      const outcome = svm.airdrop(to as never, lamports as never);
      if (!outcome || !('signature' in outcome)) throw new RpcError(-32603, 'airdrop failed');
      return getBase58Decoder().decode(outcome.signature());
    },
  };
}

/** Malformed transactions are the caller's fault: an invalid-params error, as a validator answers. */
function decodeOrThrow<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof TransactionRejected || error instanceof RpcError) throw error;
    throw invalidParams(`failed to deserialize transaction: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** How this sandbox answers each JSON-RPC request (json-rpc-listener.ts serves them). */
export function rpcAnswers(options: RpcAnswerOptions): JsonRpcAnswer {
  const table = handlers(options);
  return (request) => answer(table, request);
}

async function answer(table: Record<string, Handler>, request: JsonRpcRequest): Promise<unknown> {
  const id = request.id ?? null;
  if (typeof request.method !== 'string') return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
  const handler = Object.hasOwn(table, request.method) ? table[request.method] : undefined;
  if (!handler) return { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
  try {
    const params = Array.isArray(request.params) ? request.params : [];
    return { jsonrpc: '2.0', id, result: await handler(params) };
  } catch (error) {
    if (error instanceof RpcError) {
      const body = error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data };
      return { jsonrpc: '2.0', id, error: body };
    }
    return internalError(id, error);
  }
}
