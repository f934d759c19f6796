// Paying a gateway's MCP tools (x402's MCP transport) from code: call the tool, read the PaymentRequired from its
// error result, check the price against maxPrice, sign with an official x402 client, call again with the
// payment in `_meta["x402/payment"]`, and return the result with the receipt from `_meta["x402/payment-response"]`.
// A pending settlement is asked about again with the SAME payment, never paid twice.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { createSIWxPayload, encodeSIWxHeader, type SIWxSigner } from '@x402/extensions/sign-in-with-x';
import { randomBytes } from 'node:crypto';
import { GatewayError, MaxPriceExceededError, NetworkNotOfferedError } from './errors.ts';
import { offerAmount, signableOffers } from './offer-terms.ts';
import { solanaSigner, type SolanaSecretKey } from './solana-key.ts';
import { fastEvmSigner } from './fast-signer.ts';
import { libsecp256k1Account } from '../x402/libsecp256k1-account.ts';
import { NETWORKS, resolveNetworkName } from '../x402/networks.ts';

export interface PaidToolOptions {
  /** signs the payment: an x402Client with the v2 schemes of the buyer's chains (see mcpPayer) */
  payer: x402Client;
  /** hard cap in USDC atomic units; a higher price is refused before signing */
  maxPrice: bigint;
  /** the network to pay on (a name or CAIP-2 id), passed to the tool as its `network` argument */
  network: string;
  /** how many times a pending settlement is asked about again (with the same payment); default 20 */
  pendingRetries?: number;
}

export interface PaidToolResult {
  result: CallToolResult;
  /** the x402 SettleResponse (`success`, `transaction`, `network`, `payer`, `amount`) */
  receipt: Record<string, unknown>;
  /** what was charged, atomic units */
  charged: bigint;
}

/** An x402 client that pays with these keys on the v2 wire (the one the MCP transport speaks). */
export async function mcpPayer(keys: { evmPrivateKey?: `0x${string}`; solanaSecretKey?: SolanaSecretKey; solanaRpcUrls?: Record<string, string> }): Promise<x402Client> {
  const client = new x402Client();
  if (keys.evmPrivateKey) registerExactEvmScheme(client, { signer: fastEvmSigner(libsecp256k1Account(keys.evmPrivateKey)) });
  if (keys.solanaSecretKey !== undefined) {
    const signer = await solanaSigner(keys.solanaSecretKey);
    for (const [network, rpcUrl] of Object.entries(keys.solanaRpcUrls ?? {})) {
      const name = resolveNetworkName(network);
      if (name) client.register(NETWORKS[name].caip2 as `${string}:${string}`, new ExactSvmScheme(signer, { rpcUrl }));
    }
  }
  return client;
}

/**
 * The PaymentRequired of a tool result, where x402's MCP transport says clients look: structuredContent, then
 * structuredContent["x402/error"].data, then content[0].text (the document itself or its x402/error wrapper).
 */
export function paymentRequiredOf(result: CallToolResult): PaymentRequired | undefined {
  if (result.isError !== true) return undefined;
  const isRequired = (value: unknown): value is PaymentRequired =>
    typeof value === 'object' && value !== null && (value as { x402Version?: unknown }).x402Version === 2 && Array.isArray((value as { accepts?: unknown }).accepts);
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  if (isRequired(structured)) return structured;
  const wrapped = (structured?.['x402/error'] as { data?: unknown } | undefined)?.data;
  if (isRequired(wrapped)) return wrapped;
  const first = result.content[0];
  if (first?.type !== 'text') return undefined;
  try {
    const parsed = JSON.parse(first.text) as Record<string, unknown>;
    const data = (parsed['x402/error'] as { data?: unknown } | undefined)?.data ?? parsed;
    return isRequired(data) ? data : undefined;
  } catch {
    return undefined;
  }
}

/** An MCP client, of either MCP SDK (v1's Client, v2's Client on either wire). */
export interface ToolCaller {
  callTool(params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> }): Promise<unknown>;
}

export async function callPaidTool(mcp: ToolCaller, name: string, args: Record<string, unknown>, options: PaidToolOptions): Promise<PaidToolResult> {
  const input = { ...args, network: options.network };
  const unpaid = (await mcp.callTool({ name, arguments: input })) as CallToolResult;
  const required = paymentRequiredOf(unpaid);
  if (!required) throw toolError(unpaid);
  const network = resolveNetworkName(options.network);
  const accepts = required.accepts.filter((accept) => network !== undefined && accept.network === NETWORKS[network].caip2 && accept.scheme === 'exact');
  if (accepts.length === 0) throw new NetworkNotOfferedError(options.network, required.accepts.map((accept) => accept.network));
  const offer = signableOffers(accepts, options.network)[0]!;
  const price = offerAmount(offer);
  if (price > options.maxPrice) throw new MaxPriceExceededError(price, options.maxPrice);
  const payment = await options.payer.createPaymentPayload({ ...required, accepts: [offer] });

  for (let attempt = 0; ; attempt++) {
    const result = (await mcp.callTool({ name, arguments: input, _meta: { 'x402/payment': payment } })) as CallToolResult;
    const receipt = result._meta?.['x402/payment-response'] as Record<string, unknown> | undefined;
    if (result.isError !== true && receipt?.success === true) return { result, receipt, charged: BigInt(String(receipt.amount ?? price)) };
    const error = (result.structuredContent as { error?: { code?: string } } | undefined)?.error;
    const pending = error?.code === 'settlement_pending' || error?.code === 'payment_in_progress';
    if (!pending || attempt >= (options.pendingRetries ?? 20)) throw toolError(result);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * What a payer puts in `_meta["x402/sign-in-with-x"]` of a `resources/read` to read back a file it paid for (the
 * `resource_link` of a paid tool result): a sign-in-with-x for the gateway's origin, signed by the paying wallet, for
 * the network it paid on. Each is good for one read within 5 minutes.
 */
export async function mcpSignIn(signer: SIWxSigner, mcpUrl: string, network: string): Promise<string> {
  const name = resolveNetworkName(network);
  if (!name) throw new NetworkNotOfferedError(network, []);
  const url = new URL(mcpUrl);
  const now = Date.now();
  const info = {
    domain: url.host,
    uri: url.origin,
    statement: 'Read back a result I paid for',
    version: '1',
    nonce: randomBytes(16).toString('hex'),
    issuedAt: new Date(now).toISOString(),
    expirationTime: new Date(now + 300_000).toISOString(),
    chainId: NETWORKS[name].caip2,
    type: NETWORKS[name].family === 'evm' ? ('eip191' as const) : ('ed25519' as const),
  };
  return encodeSIWxHeader(await createSIWxPayload(info, signer, url));
}

/** A tool's error result as a GatewayError: the gateway's { status, code, message } when it states them, else the 402 it is. */
function toolError(result: CallToolResult): GatewayError {
  const error = (result.structuredContent as { error?: { status?: number; code?: string; message?: string } } | undefined)?.error;
  if (error) return new GatewayError(error.status ?? 400, { error: error.message, code: error.code });
  const required = paymentRequiredOf(result);
  return new GatewayError(402, { error: required?.error ?? 'the payment was refused', code: 'payment_required' });
}
