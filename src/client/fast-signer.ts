// The buyer's EVM signer for the official x402 client schemes (in the proxy, the client library and `x402-ai mcp`):
// a libsecp256k1 account (x402/libsecp256k1-account.ts: native, else WebAssembly; the library the gateway recovers
// signatures with) instead of viem's pure-JS curve, ~0.06-0.2 ms a signature against ~0.5-1.5 ms. A payment-channel
// voucher is hashed from the escrow's domain separator kept per chain and its two words (x402/batch-settlement.ts),
// so a voucher costs two keccaks and one signature; every other typed document (ERC-3009, Permit2, EIP-2612) is
// hashed by viem as usual.
import { bytesToHex, getAddress, hashTypedData, hexToBytes, type Hex, type PublicClient, type TypedDataDefinition } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { BATCH_SETTLEMENT_DOMAIN, toClientEvmSigner, voucherTypes, type ClientEvmSigner } from '@x402/evm';
import { BATCH_SETTLEMENT_CONTRACT, voucherDigestBytes } from '../x402/batch-settlement.ts';

type TypedData = Parameters<ClientEvmSigner['signTypedData']>[0];

const ESCROW = BATCH_SETTLEMENT_CONTRACT.toLowerCase();
const VOUCHER_FIELDS = JSON.stringify(voucherTypes.Voucher);

// the official signVoucher passes voucherTypes itself: compared by reference first, by value otherwise
const isVoucherFields = (fields: unknown) => fields === voucherTypes.Voucher || JSON.stringify(fields) === VOUCHER_FIELDS;

/** The digest a signature of `typed` signs: the voucher's short way when it is one of the escrow's, else viem's. */
export function typedDataDigest(typed: TypedData): Uint8Array {
  const { domain, message } = typed;
  if (
    typed.primaryType === 'Voucher' &&
    domain.name === BATCH_SETTLEMENT_DOMAIN.name &&
    domain.version === BATCH_SETTLEMENT_DOMAIN.version &&
    String(domain.verifyingContract).toLowerCase() === ESCROW &&
    isVoucherFields((typed.types as Record<string, unknown>).Voucher) &&
    typeof message.channelId === 'string' &&
    /^0x[0-9a-fA-F]{64}$/.test(message.channelId)
  ) {
    return voucherDigestBytes(message.channelId as Hex, BigInt(message.maxClaimableAmount as bigint | string), Number(domain.chainId));
  }
  return hexToBytes(hashTypedData(typed as TypedDataDefinition));
}

/**
 * An EVM signer for the official client schemes, over a libsecp256k1 account (libsecp256k1Account: a caller that also
 * signs messages passes the account it signs them with); `publicClient` lets the schemes read the chain (allowances,
 * the escrow).
 */
export function fastEvmSigner(account: PrivateKeyAccount, publicClient?: PublicClient): ClientEvmSigner {
  // r || s (low s) || v of 27/28, as ecrecover and viem take it
  const signTypedData = async (typed: TypedData): Promise<Hex> => account.sign({ hash: bytesToHex(typedDataDigest(typed)) });
  return toClientEvmSigner(
    { address: getAddress(account.address), signTypedData, signTransaction: account.signTransaction } as Parameters<typeof toClientEvmSigner>[0],
    publicClient as Parameters<typeof toClientEvmSigner>[1],
  );
}
