// Checks that a message was signed by the payer of a payment: EIP-191 personal_sign on EVM networks
// (0x-hex signature), ed25519 over the UTF-8 bytes on Solana (base58 signature, as wallets show them).
import { isAddress as isEvmAddress, isHex, verifyMessage } from 'viem';
import type { SignatureBytes } from '@solana/kit';
import type { ChainFamily } from '../x402/networks.ts';

export async function isSignedByPayer(family: ChainFamily, payer: string, message: string, signature: string): Promise<boolean> {
  try {
    if (family === 'evm') {
      if (!isEvmAddress(payer, { strict: false }) || !isHex(signature)) return false;
      return await verifyMessage({ address: payer, message, signature });
    }
    // kit is loaded at the first Solana signature, not at startup (a service may never see one)
    const { address, getBase58Encoder, getPublicKeyFromAddress, isAddress: isSolanaAddress, verifySignature } = await import('@solana/kit');
    if (!isSolanaAddress(payer) || !/^[1-9A-HJ-NP-Za-km-z]{80,90}$/.test(signature)) return false;
    const bytes = getBase58Encoder().encode(signature);
    if (bytes.length !== 64) return false;
    const key = await getPublicKeyFromAddress(address(payer));
    return await verifySignature(key, bytes as SignatureBytes, new TextEncoder().encode(message));
  } catch {
    return false;
  }
}
