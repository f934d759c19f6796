// The x402 `upto` scheme on EVM (x402 v2 only): what the client signs and sends, and the payment's one-use
// identity (the gas-sponsoring extensions it may come with: gas-sponsoring.ts). Shapes as @x402/evm 2.27.0 sends them.
import { z } from 'zod';
import { PERMIT2_ADDRESS as OFFICIAL_PERMIT2, x402UptoPermit2ProxyAddress } from '@x402/evm';

/** Permit2's canonical address, and the upto proxy's: the addresses the official client signs for. */
export const PERMIT2_ADDRESS: `0x${string}` = OFFICIAL_PERMIT2;
export const UPTO_PROXY_ADDRESS: `0x${string}` = x402UptoPermit2ProxyAddress;

export const UPTO_SCHEME = 'upto';

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address');
const uintString = z.string().regex(/^\d{1,78}$/, 'an unsigned integer string');
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'hex');

/** The payload: one Permit2 PermitWitnessTransferFrom signature, spender the upto proxy. */
export const uptoPermit2PayloadSchema = z.object({
  signature: hex.max(2 + 2 * 4096),
  permit2Authorization: z.object({
    from: evmAddress,
    permitted: z.object({ token: evmAddress, amount: uintString }),
    spender: evmAddress,
    nonce: uintString,
    deadline: uintString,
    witness: z.object({ to: evmAddress, facilitator: evmAddress, validAfter: uintString }),
  }),
});
export type UptoPermit2Payload = z.infer<typeof uptoPermit2PayloadSchema>;

/** Permit2 nonces are per owner across every token, so (chain, owner, nonce) is the payment. */
export function uptoPaymentKey(chainId: number, payload: UptoPermit2Payload): string {
  const { from, nonce } = payload.permit2Authorization;
  return `permit2:${chainId}:${from.toLowerCase()}:${BigInt(nonce).toString()}`;
}
