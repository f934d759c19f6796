// The identity of a payment, used to reserve it exactly once before any work is done.
// EVM: the EIP-3009 authorization is unique per (chain, token, payer, nonce).
// Solana: the signed message bytes are unique (they contain a recent blockhash and the exact transfer).
import { createHash } from 'node:crypto';
import type { EvmExactPayload, SvmExactPayload } from './types.ts';

export function evmPaymentKey(chainId: number, asset: string, payload: EvmExactPayload): string {
  const { from, nonce } = payload.authorization;
  return `evm:${chainId}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`;
}

/** Returns undefined when the transaction is not a well-formed wire transaction. */
export function svmPaymentKey(payload: SvmExactPayload): string | undefined {
  const message = svmMessageBytes(payload.transaction);
  return message && `svm:${createHash('sha256').update(message).digest('hex')}`;
}

/** A wire transaction is a compact-u16 count of signatures, the 64-byte signatures, then the message. */
export function svmMessageBytes(base64Transaction: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64Transaction)) return undefined;
  const bytes = Buffer.from(base64Transaction, 'base64');
  let count = 0;
  let offset = 0;
  for (let shift = 0; shift < 21; shift += 7) {
    const byte = bytes[offset++];
    if (byte === undefined) return undefined;
    count |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
  }
  const messageStart = offset + count * 64;
  if (count === 0 || messageStart >= bytes.length) return undefined;
  return bytes.subarray(messageStart);
}
