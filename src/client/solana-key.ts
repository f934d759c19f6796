// A Solana buyer key as people hold it: the 64-byte secret key (32-byte seed then 32-byte public key) as
// bytes, as solana-keygen's JSON array, or as base58 text. Error messages never quote the key.
import { generateKeyPairSync } from 'node:crypto';
import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';

export type SolanaSecretKey = Uint8Array | string;

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const KEY_FORMS = 'a 64-byte Solana secret key (bytes, a solana-keygen JSON array, or base58)';

function jsonArrayBytes(text: string): Uint8Array {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`the Solana key is not valid JSON; expected ${KEY_FORMS}`); // JSON.parse's message would quote the key
  }
  if (!Array.isArray(parsed) || !parsed.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
    throw new Error(`the Solana key JSON must be an array of bytes (0..255); expected ${KEY_FORMS}`);
  }
  return Uint8Array.from(parsed as number[]);
}

/** The 64 secret-key bytes of any accepted form; throws (without quoting the key) on anything else. */
export function solanaSecretKeyBytes(key: SolanaSecretKey): Uint8Array {
  let bytes: Uint8Array;
  if (key instanceof Uint8Array) bytes = Uint8Array.from(key); // our own copy: the caller may wipe theirs
  else {
    const text = key.trim();
    if (text.startsWith('[')) bytes = jsonArrayBytes(text);
    else if (BASE58.test(text)) bytes = Uint8Array.from(getBase58Encoder().encode(text));
    else throw new Error(`the Solana key is neither a JSON array nor base58; expected ${KEY_FORMS}`);
  }
  if (bytes.length !== 64) throw new Error(`the Solana key has ${bytes.length} bytes; expected ${KEY_FORMS}`);
  return bytes;
}

/** The signer of a secret key; rejects a key whose public half does not match its private half. */
export async function solanaSigner(key: SolanaSecretKey): Promise<KeyPairSigner> {
  try {
    return await createKeyPairSignerFromBytes(solanaSecretKeyBytes(key));
  } catch (error) {
    if (error instanceof Error && error.message.includes(KEY_FORMS)) throw error;
    throw new Error('the Solana key is not a valid Ed25519 key pair (its public half must match its private half)');
  }
}

/** A fresh 64-byte secret key (what solana-keygen new writes, as bytes). */
export function generateSolanaSecretKey(): Uint8Array {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  return Uint8Array.from([...Buffer.from(jwk.d!, 'base64url'), ...Buffer.from(jwk.x!, 'base64url')]);
}
