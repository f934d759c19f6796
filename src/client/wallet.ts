// A buyer's key from the shell: made fresh (`x402-ai wallet new`), saved where only its owner can read it,
// and the address it pays from. Keys are text as --key-file reads them: EVM 0x hex, Solana base58.
import { writeFile } from 'node:fs/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { getBase58Decoder } from '@solana/kit';
import { generateSolanaSecretKey, solanaSecretKeyBytes, solanaSigner } from './solana-key.ts';
import { UsageError } from './command-line.ts';

export interface NewWallet {
  family: 'evm' | 'svm';
  address: string;
  /** the secret key as a key file holds it (EVM: 0x hex; Solana: the 64-byte secret key in base58) */
  secretKey: string;
}

/** A fresh key of the chain family. */
export function newWallet(family: 'evm' | 'svm'): NewWallet {
  if (family === 'evm') {
    const secretKey = generatePrivateKey();
    return { family, address: privateKeyToAccount(secretKey).address, secretKey };
  }
  const bytes = generateSolanaSecretKey();
  const base58 = getBase58Decoder();
  return { family, address: base58.decode(bytes.subarray(32)), secretKey: base58.decode(bytes) };
}

/** The address a key text pays from; errors never quote the key. */
export async function addressOfKey(family: 'evm' | 'svm', key: string): Promise<string> {
  if (family === 'evm') {
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new UsageError('the key must be a 0x-prefixed 32-byte hex private key');
    return privateKeyToAccount(key as `0x${string}`).address;
  }
  try {
    return (await solanaSigner(solanaSecretKeyBytes(key))).address;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Writes the key to a new file readable and writable by its owner only (0600, created so: never readable by
 * others even for a moment). An existing file is never overwritten: losing a funded key loses its funds.
 */
export async function saveKeyFile(path: string, secretKey: string): Promise<void> {
  try {
    await writeFile(path, `${secretKey}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new UsageError(`${path} already exists: a key file is never overwritten; choose another --out`);
    throw new UsageError(`cannot write ${path}: ${(error as Error).message}`);
  }
}
