// The buyer's key for a network, from where every x402-ai command reads it: a key file (--key-file), else the
// environment (X402_EVM_PRIVATE_KEY on EVM networks, X402_SOLANA_SECRET_KEY on Solana). Never from arguments, and
// never quoted in a message.
import type { ChainFamily } from '../x402/networks.ts';
import { readSecretFile, UsageError } from './command-line.ts';
import { solanaSecretKeyBytes } from './solana-key.ts';

export type BuyerKey = { evmPrivateKey: `0x${string}` } | { solanaSecretKey: Uint8Array };

export const KEY_ENV = { evm: 'X402_EVM_PRIVATE_KEY', svm: 'X402_SOLANA_SECRET_KEY' } as const;

/** The key's text: the key file's, else the environment variable's; a UsageError when there is none. */
export function keyText(envName: string, keyFile: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const key = keyFile ? readSecretFile(keyFile, 'the key') : env[envName];
  if (!key) throw new UsageError(`no key: set ${envName} or pass --key-file`);
  return key;
}

export function buyerKey(family: ChainFamily, keyFile: string | undefined, env: NodeJS.ProcessEnv = process.env): BuyerKey {
  const text = keyText(KEY_ENV[family], keyFile, env);
  if (family === 'svm') {
    try {
      return { solanaSecretKey: solanaSecretKeyBytes(text) };
    } catch (error) {
      throw new UsageError((error as Error).message); // never quotes the key
    }
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) throw new UsageError('the key must be a 0x-prefixed 32-byte hex private key');
  return { evmPrivateKey: text as `0x${string}` };
}
