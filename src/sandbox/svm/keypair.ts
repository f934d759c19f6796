// Generated ed25519 keys whose secret bytes we keep (Solana CLI layout: 32-byte seed then 32-byte
// public key), because the facilitator is configured with bytes, not with a live CryptoKey.
import { randomBytes } from 'node:crypto';
import { createKeyPairSignerFromPrivateKeyBytes, getAddressEncoder, type Address, type KeyPairSigner } from '@solana/kit';

export interface SvmKeypair {
  address: Address;
  /** 64 bytes: seed || public key, the format of a Solana CLI keypair file */
  secretKey: Uint8Array;
  signer: KeyPairSigner;
}

export async function generateSvmKeypair(): Promise<SvmKeypair> {
  return svmKeypairFrom(new Uint8Array(randomBytes(32)));
}

/** The keypair of a 32-byte seed, or of the 64 bytes a keypair's secretKey holds (seed first). */
export async function svmKeypairFrom(bytes: Uint8Array): Promise<SvmKeypair> {
  const seed = bytes.slice(0, 32);
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(getAddressEncoder().encode(signer.address), 32);
  return { address: signer.address, secretKey, signer };
}
