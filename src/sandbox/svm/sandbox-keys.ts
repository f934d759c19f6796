// The Solana sandbox's three keys (the mint authority, the fee payer, the operator who is paid), kept across
// restarts with the chain's state (kept-state.ts) or fresh. Derived with node:crypto, not @solana/kit: the
// service knows its payTo and fee payer at startup while the runtime itself (litesvm, kit) loads at the chain's
// first use (sandbox.ts).
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { getAddressDecoder } from '@solana/addresses';
import { keptFiles, readKeptKeys, type KeptFiles } from '../kept-state.ts';
import type { SvmNetwork } from '../../x402/networks.ts';

export interface SvmKeyBytes {
  /** base58 public key */
  address: string;
  /** 64 bytes: seed || public key, the format of a Solana CLI keypair file */
  secretKey: Uint8Array;
}

export interface SvmSandboxKeys {
  mintAuthority: SvmKeyBytes;
  feePayer: SvmKeyBytes;
  operator: SvmKeyBytes;
}

/** What a restarted chain needs of its first start (its accounts are in the snapshot): each key's 64 bytes. */
export interface KeptSvmKeys {
  mintAuthority: number[];
  feePayer: number[];
  operator: number[];
}

/** An Ed25519 seed as PKCS#8 DER: this fixed prefix, then the 32 bytes. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const addressDecoder = getAddressDecoder();

/** The key of a 32-byte seed, or of the 64 bytes a keypair's secretKey holds (seed first). */
export function svmKeyFrom(bytes: Uint8Array): SvmKeyBytes {
  const seed = bytes.subarray(0, 32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, 32);
  return { address: addressDecoder.decode(publicKey), secretKey };
}

/** Where a chain's snapshot and keys are kept under the sandbox's state folder. */
export const svmKeptFiles = (stateDir: string, network: SvmNetwork): KeptFiles => keptFiles(stateDir, network.name, 'litesvm');

/** The keys kept with the chain's state when both are there (`kept`: the chain resumes from its snapshot), else fresh ones. */
export function svmSandboxKeys(files: KeptFiles | undefined): { keys: SvmSandboxKeys; kept: boolean } {
  const kept = readKeptKeys<KeptSvmKeys>(files);
  const key = (bytes: number[] | undefined) => svmKeyFrom(bytes ? Uint8Array.from(bytes) : new Uint8Array(randomBytes(32)));
  return {
    keys: { mintAuthority: key(kept?.mintAuthority), feePayer: key(kept?.feePayer), operator: key(kept?.operator) },
    kept: kept !== undefined,
  };
}

/** The keys as kept-state.ts writes them. */
export const keptSvmKeys = (keys: SvmSandboxKeys): KeptSvmKeys => ({
  mintAuthority: [...keys.mintAuthority.secretKey],
  feePayer: [...keys.feePayer.secretKey],
  operator: [...keys.operator.secretKey],
});
