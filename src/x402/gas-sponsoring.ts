// The x402 gas-sponsoring extensions (eip2612GasSponsoring, erc20ApprovalGasSponsoring): a payer without a Permit2
// allowance (and without gas) signs a permit or an approval, which the facilitator submits before the Permit2
// transfer. What a 402 declares, and what a payment's `extensions` carry back, as @x402/evm 2.27.0 sends them.
// Used by `upto` and by payment channels' Permit2 deposits.
import { z } from 'zod';

export const EIP2612_GAS_SPONSORING = 'eip2612GasSponsoring';
export const ERC20_APPROVAL_GAS_SPONSORING = 'erc20ApprovalGasSponsoring';

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address');
const uintString = z.string().regex(/^\d{1,78}$/, 'an unsigned integer string');
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'hex');

/** `extensions.eip2612GasSponsoring.info` of a payment: the payer's EIP-2612 permit for Permit2. */
export const eip2612PermitInfoSchema = z.object({
  from: evmAddress,
  asset: evmAddress,
  spender: evmAddress,
  amount: uintString,
  nonce: uintString,
  deadline: uintString,
  signature: hex.max(2 + 2 * 4096),
  version: z.string().regex(/^\d+(\.\d+)*$/),
});
export type Eip2612PermitInfo = z.infer<typeof eip2612PermitInfoSchema>;

/** `extensions.erc20ApprovalGasSponsoring.info`: the payer's signed (unsent) approve(Permit2, max). */
export const erc20ApprovalInfoSchema = z.object({
  from: evmAddress,
  asset: evmAddress,
  spender: evmAddress,
  amount: uintString,
  signedTransaction: hex.max(2 + 2 * 4096),
  version: z.string().regex(/^\d+(\.\d+)*$/),
});
export type Erc20ApprovalInfo = z.infer<typeof erc20ApprovalInfoSchema>;

/** What a client sent besides the payload that the upto facilitator reads. */
export interface GasSponsoring {
  eip2612?: Eip2612PermitInfo;
  erc20Approval?: Erc20ApprovalInfo;
}

/**
 * Reads the gas-sponsoring infos out of a payment's `extensions`. @x402/fetch echoes every declared extension,
 * so an info without a signer (`from`) is the 402's own declaration coming back, not a submission; one that
 * has a signer but is malformed is an error (a client meaning to be sponsored would fail later, worse).
 */
export function readGasSponsoring(extensions: Record<string, unknown> | undefined): GasSponsoring | string {
  const info = (key: string): unknown => {
    const extension = extensions?.[key];
    const value = extension && typeof extension === 'object' ? (extension as { info?: unknown }).info : undefined;
    return value && typeof value === 'object' && 'from' in value ? value : undefined;
  };
  const sponsoring: GasSponsoring = {};
  const eip2612 = info(EIP2612_GAS_SPONSORING);
  if (eip2612 !== undefined) {
    const parsed = eip2612PermitInfoSchema.safeParse(eip2612);
    if (!parsed.success) return 'invalid_eip2612_extension_format';
    sponsoring.eip2612 = parsed.data;
  }
  const erc20 = info(ERC20_APPROVAL_GAS_SPONSORING);
  if (erc20 !== undefined) {
    const parsed = erc20ApprovalInfoSchema.safeParse(erc20);
    if (!parsed.success) return 'invalid_erc20_approval_extension_format';
    sponsoring.erc20Approval = parsed.data;
  }
  return sponsoring;
}

/**
 * The 402's `extensions` entries declaring that our facilitator sponsors the Permit2 approval of a payer
 * without native gas (the official client signs only when the key is present and its allowance is short).
 * Declared by `info` alone: the client reads nothing else, and PAYMENT-REQUIRED must stay well under 8 KB
 * (what the payer sends back is checked by the zod schemas above). `only`: the keys a remote facilitator's
 * /supported lists (it carries them out, not us).
 */
type GasSponsoringDeclaration = { info: { description: string; version: '1' } };

export function gasSponsoringDeclarations(only?: readonly string[]): Record<string, GasSponsoringDeclaration> {
  const all: Record<string, GasSponsoringDeclaration> = {
    [EIP2612_GAS_SPONSORING]: {
      info: { description: 'The facilitator accepts an EIP-2612 permit to the canonical Permit2 and pays its gas.', version: '1' },
    },
    [ERC20_APPROVAL_GAS_SPONSORING]: {
      info: { description: 'The facilitator broadcasts a signed approve(Permit2) and pays its gas.', version: '1' },
    },
  };
  return only ? Object.fromEntries(Object.entries(all).filter(([key]) => only.includes(key))) : all;
}
