// Whether a 32-byte digest was signed by an Ethereum account (an EOA): the ECDSA public-key recovery every paid
// call's proof needs (a voucher, an ERC-3009 or Permit2 authorization), by libsecp256k1 (libsecp256k1.ts): ~0.05-0.2
// ms against ~1.2 ms for the pure-JS recovery viem does, and it runs on every paid call. Only the form the token
// contracts' ecrecover accepts: 65 bytes r||s||v, low s, v of 27/28 (or 0/1).
import { hexToBytes, isAddressEqual, keccak256, type Address, type Hex } from 'viem';
import { libsecp256k1 } from './libsecp256k1.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;

/** The address that signed `digest`, or undefined when the signature is not in the accepted form. */
export function recoverSigner(digest: Hex, signature: Hex): Address | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature) || !/^0x[0-9a-fA-F]{64}$/.test(digest)) return undefined;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  if (r === 0n || r >= N || s === 0n || s > HALF_N) return undefined;
  if (v !== 0 && v !== 1 && v !== 27 && v !== 28) return undefined;
  const publicKey = libsecp256k1().recover(hexToBytes(digest), hexToBytes(signature).subarray(0, 64), (v % 27) as 0 | 1);
  if (!publicKey) return undefined;
  // the address is the last 20 bytes of the keccak of the uncompressed key without its 0x04 prefix
  return `0x${keccak256(publicKey.subarray(1)).slice(-40)}` as Address;
}

/** Whether `signature` over `digest` is by `signer`. */
export function signedBy(signer: Address, digest: Hex, signature: Hex): boolean {
  const recovered = recoverSigner(digest, signature);
  return recovered !== undefined && isAddressEqual(recovered, signer);
}
