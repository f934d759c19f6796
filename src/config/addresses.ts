// What an on-chain address must look like per chain family, said so an operator can fix it. A placeholder
// such as "0x…" or the zero address must never reach a live 402 as the place money goes.
import { isAddress as isEvmAddress } from 'viem';
import { isAddress as isSolanaAddress } from '@solana/addresses';
import type { ChainFamily } from '../x402/networks.ts';

const EVM_HEX = /^0x[0-9a-fA-F]{40}$/;

/** Why `value` is not a usable address of the family, or undefined when it is one. */
export function addressProblem(family: ChainFamily, value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'is missing';
  if (family === 'evm') {
    if (!EVM_HEX.test(value)) return `"${value}" is not an EVM address (0x and 40 hex digits)`;
    if (/^0x0{40}$/.test(value)) return 'is the zero address';
    // viem checks the EIP-55 checksum only when letters are mixed case, as wallets do
    if (!isEvmAddress(value, { strict: true })) return `"${value}" fails its EIP-55 checksum (mixed case must be checksummed)`;
    return undefined;
  }
  if (!isSolanaAddress(value)) return `"${value}" is not a Solana address (a 32-byte base58 public key)`;
  return undefined;
}
