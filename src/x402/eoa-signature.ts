// Whether a 32-byte digest was signed by an Ethereum account (an EOA): the ECDSA public-key recovery every paid
// call's proof needs (a voucher, an ERC-3009 or Permit2 authorization), by libsecp256k1 compiled to WebAssembly
// (tiny-secp256k1): ~0.2 ms here against ~1.2 ms for the pure-JS recovery viem does, and it runs on every paid
// call. Only the form the token contracts' ecrecover accepts: 65 bytes r||s||v, low s, v of 27/28 (or 0/1).
import { createRequire } from 'node:module';
import { hexToBytes, isAddressEqual, keccak256, type Address, type Hex } from 'viem';

type Libsecp256k1 = typeof import('tiny-secp256k1');
let libsecp256k1: Libsecp256k1 | undefined;
/**
 * Loaded at the first recovery (~20 ms, once), not at startup: its WebAssembly instance holds ~14 MB of memory
 * (measured: a bare node 44 MB, 57 MB once it is imported) that an idle service has no use for.
 */
const secp256k1 = (): Libsecp256k1 => (libsecp256k1 ??= createRequire(import.meta.url)('tiny-secp256k1') as Libsecp256k1);

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
  let publicKey: Uint8Array | null;
  try {
    publicKey = secp256k1().recover(hexToBytes(digest), hexToBytes(signature).subarray(0, 64), (v % 27) as 0 | 1, false);
  } catch {
    return undefined; // an r that is no curve point's x
  }
  if (!publicKey) return undefined;
  // the address is the last 20 bytes of the keccak of the uncompressed key without its 0x04 prefix
  return `0x${keccak256(publicKey.subarray(1)).slice(-40)}` as Address;
}

/** Whether `signature` over `digest` is by `signer`. */
export function signedBy(signer: Address, digest: Hex, signature: Hex): boolean {
  const recovered = recoverSigner(digest, signature);
  return recovered !== undefined && isAddressEqual(recovered, signer);
}
