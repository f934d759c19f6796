// The payment model: what the payment core, the schemes and the facilitators work on, whichever protocol
// version and transport carried it. Each protocol version has its codec (src/x402/v1, src/x402/v2); each
// transport its wire edge (src/http/paid/payment-edge.ts, src/http/mcp/).
import { sameAddress } from '../lib/same-address.ts';
import { NETWORKS, resolveNetworkName, type NetworkName } from './networks.ts';

/** the x402 version whose headers carried a proof (and in which the answer is given) */
export type Wire = 1 | 2;

/** What the server demands for one call on one network with one scheme. Built server-side only. */
export interface PaymentRequirement {
  scheme: string;
  network: NetworkName;
  /** atomic units of `asset` */
  amount: bigint;
  payTo: string;
  asset: string;
  maxTimeoutSeconds: number;
  /** scheme-specific facts clients sign with (EVM: EIP-712 name/version; Solana: feePayer) */
  extra: Record<string, unknown>;
  /** the paid endpoint, for facilitators that want it (the v1 wire repeats it in every requirement) */
  resource?: { url: string; description: string };
}

/** A client's payment, decoded from X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2). */
export interface PaymentProof {
  scheme: string;
  network: NetworkName;
  /** scheme-specific: an EIP-3009 authorization, a Solana transaction... checked by the scheme */
  payload: Record<string, unknown>;
  wire: Wire;
  /** v2: the `extensions` the client sent with it (gas-sponsoring signatures for upto) */
  extensions?: Record<string, unknown>;
}

/** A proof as a codec read it: its network as the client spelled it (a v1 name or a CAIP-2 id), not yet resolved. */
export type DecodedProof = Omit<PaymentProof, 'network'> & { network: string };

/** A paid operation as a payment-required answer describes it (the x402 v2 `resource`). */
export interface ResourceInfo {
  url: string;
  description: string;
  mimeType: string;
  serviceName?: string;
  /** catalogue tags (bazaar: at most 5 of at most 32 printable ASCII characters) */
  tags?: string[];
}

/** A payment-required answer before a codec puts it on its wire: why, what is sold, and what may be paid. */
export interface PaymentRequired {
  reason: string;
  resource: ResourceInfo;
  /** the offers, in order (a v1 answer keeps those of its schemes) */
  accepts: PaymentRequirement[];
  /** v2 `extensions` the offers and the operation declare */
  extensions: Record<string, unknown>;
}

/** The outcome of a settlement as the client is told, before a codec puts it on its wire. */
export interface SettlementReceipt {
  success: boolean;
  transaction: string;
  network: NetworkName;
  payer: string;
  /** what the payer was charged */
  amount?: bigint;
  errorReason?: string;
  errorMessage?: string;
  /**
   * The receipt's `amount` where the scheme's own contract says it is not the charge (batch-settlement: what its
   * transaction moved, a deposit's; '' for a charge made off-chain). Every wire that carries the receipt says this
   * one (receiptAmount), the charge being in `extra` then.
   */
  schemeAmount?: string;
  /** the scheme's own fields of the receipt (batch-settlement: chargedAmount, channelState) */
  extra?: Record<string, unknown>;
}

/** The `amount` a receipt states on every wire: the scheme's own where it has one, else the charge. */
export function receiptAmount(receipt: SettlementReceipt): string | undefined {
  return receipt.schemeAmount ?? receipt.amount?.toString();
}

/** The ledger keeps requirement and proof as JSON (amount as a decimal string). */
export function storedRequirement(requirement: PaymentRequirement): Record<string, unknown> {
  return { ...requirement, amount: requirement.amount.toString() };
}

export function storedProof(proof: PaymentProof): Record<string, unknown> {
  return { ...proof };
}

/**
 * Reads a requirement back from the ledger: this model's form, or the v1 wire form that rows written
 * before it hold (maxAmountRequired). Undefined when it is neither.
 */
export function requirementFromStored(value: unknown): PaymentRequirement | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const row = value as Record<string, unknown>;
  const amount = row.amount ?? row.maxAmountRequired;
  const network = typeof row.network === 'string' ? resolveNetworkName(row.network) : undefined;
  if (typeof amount !== 'string' || !/^\d{1,78}$/.test(amount) || !network) return undefined;
  if (typeof row.scheme !== 'string' || typeof row.payTo !== 'string' || typeof row.asset !== 'string') return undefined;
  return {
    scheme: row.scheme,
    network,
    amount: BigInt(amount),
    payTo: row.payTo,
    asset: row.asset,
    maxTimeoutSeconds: typeof row.maxTimeoutSeconds === 'number' ? row.maxTimeoutSeconds : 0,
    extra: typeof row.extra === 'object' && row.extra !== null ? (row.extra as Record<string, unknown>) : {},
    ...(typeof row.resource === 'string' ? { resource: { url: row.resource, description: String(row.description ?? '') } } : {}),
    ...(typeof row.resource === 'object' && row.resource !== null ? { resource: row.resource as { url: string; description: string } } : {}),
  };
}

/** Reads a proof back from the ledger (this model's form, or a v1 X-PAYMENT document). */
export function proofFromStored(value: unknown): PaymentProof | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const row = value as Record<string, unknown>;
  const network = typeof row.network === 'string' ? resolveNetworkName(row.network) : undefined;
  if (!network || typeof row.scheme !== 'string' || typeof row.payload !== 'object' || row.payload === null) return undefined;
  const extensions = typeof row.extensions === 'object' && row.extensions !== null ? { extensions: row.extensions as Record<string, unknown> } : {};
  return { scheme: row.scheme, network, payload: row.payload as Record<string, unknown>, wire: row.wire === 2 ? 2 : 1, ...extensions };
}

export function caip2Of(network: NetworkName): string {
  return NETWORKS[network].caip2;
}

/** Why what the client accepted is not what this server demands for this call, or undefined when it is. */
export function acceptedMismatch(accepted: Pick<PaymentRequirement, 'scheme' | 'amount' | 'asset' | 'payTo'>, requirement: PaymentRequirement): string | undefined {
  if (accepted.scheme !== requirement.scheme) return 'invalid_scheme: the payment accepted another scheme than required';
  if (accepted.amount !== requirement.amount) return 'invalid_amount: the payment accepted another amount than required';
  if (!sameAddress(accepted.asset, requirement.asset)) return 'asset_mismatch: the payment accepted another asset';
  if (!sameAddress(accepted.payTo, requirement.payTo)) return 'invalid_pay_to: the payment accepted another recipient';
  return undefined;
}
