// The ECDSA check of a payment-channel voucher (x402 batch-settlement), fast on the second voucher of a payer:
// the first is recovered (viem), which yields the payer authorizer's public key; that key is then kept with a
// precomputed multiplication table, so each later voucher is a plain verification against it. Recovery costs a
// full unprecomputed scalar multiplication; verification against a cached table is a few times cheaper, and
// this check runs on every paid call of a channel.
import { secp256k1 } from '@noble/curves/secp256k1';
import { invert, mod } from '@noble/curves/abstract/modular';
import { hexToBytes, isAddressEqual, recoverPublicKey, type Address, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';

type Point = InstanceType<typeof secp256k1.ProjectivePoint>;

const N = secp256k1.CURVE.n;
const HALF_N = N >> 1n;
const G = secp256k1.ProjectivePoint.BASE;
/** window of the per-key table: 4 costs ~2 ms to build and ~50 KB, and cuts a verification to about a third */
const WINDOW = 4;
/** payer authorizers whose keys are kept (least recently used dropped beyond it) */
const MAX_KEYS = 10_000;

const keys = new Map<string, Point>();

function remember(address: string, point: Point): void {
  if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
  keys.set(address, secp256k1.utils.precompute(WINDOW, point) as Point);
}

/** r and s of a 65-byte r||s||v signature with a low s (the form Ethereum signers produce); undefined otherwise. */
function parse(signature: Hex): { r: bigint; s: bigint } | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  if (r === 0n || r >= N || s === 0n || s > HALF_N) return undefined;
  return { r, s };
}

function verifyWith(point: Point, digest: Hex, r: bigint, s: bigint): boolean {
  const w = invert(s, N);
  const u1 = mod(mod(BigInt(digest), N) * w, N);
  const u2 = mod(r * w, N);
  // multiply, not multiplyUnsafe: in @noble/curves 1.9.1 the unsafe one gives wrong points on a key with a
  // precomputed table (secp256k1's tables are built for its endomorphism's half-length scalars)
  const R = G.multiply(u1 === 0n ? N : u1).add(point.multiply(u2));
  if (R.equals(secp256k1.ProjectivePoint.ZERO)) return false;
  return mod(R.toAffine().x, N) === r;
}

/** Whether `signature` over `digest` is by `signer` (an EOA). */
export async function signedBy(signer: Address, digest: Hex, signature: Hex): Promise<boolean> {
  const parsed = parse(signature);
  if (!parsed) return false;
  const address = signer.toLowerCase();
  const known = keys.get(address);
  if (known) {
    keys.delete(address);
    keys.set(address, known);
    return verifyWith(known, digest, parsed.r, parsed.s);
  }
  try {
    const publicKey = await recoverPublicKey({ hash: digest, signature });
    if (!isAddressEqual(publicKeyToAddress(publicKey), signer)) return false;
    remember(address, secp256k1.ProjectivePoint.fromHex(hexToBytes(publicKey)));
    return true;
  } catch {
    return false;
  }
}
