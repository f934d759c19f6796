// What an agent can read over MCP: the price list and the model catalog (public, listed), and each paid image or
// audio (`x402-ai://payments/<payment>/media/<media>`, the URI a paid tool result links), read by its payer only,
// under the rule of GET /api/v1/payments/:id: the payment is found by its id, and a result goes only to the wallet
// that proves, by signing in (sign-in-with-x, in `_meta["x402/sign-in-with-x"]`), that it paid.
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate, type CacheHint, type McpServer, type ReadResourceResult, type ServerContext } from '@modelcontextprotocol/server';
import { encodeSIWxHeader, type SIWxPayload } from '@x402/extensions/sign-in-with-x';
import { toApiError } from '../render-error.ts';
import { isMediaId, type MediaStore } from '../../media/media-store.ts';
import { capabilityPriceRange } from '../../pricing/price-range.ts';
import { priceText } from '../../pricing/price-text.ts';
import { formatUsdc } from '../../pricing/usdc.ts';
import { isSamePayer } from '../../payments/sign-in-replay.ts';
import type { Ledger } from '../../store/ledger.ts';
import type { Config } from '../../config/load.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import type { PaymentGate } from '../../payments/gate.ts';
import { verifySignIn } from '../../x402/sign-in-with-x.ts';
import { NETWORKS } from '../../x402/networks.ts';
import { findPayments } from '../paid/payments-route.ts';
import { toolResource, type PaidTool } from './tools.ts';

export const PRICES_URI = 'x402-ai://prices';
export const MODELS_URI = 'x402-ai://models';
const MEDIA_TEMPLATE = 'x402-ai://payments/{payment}/media/{media}';
/** where a reader of a paid result proves it is the payer: a sign-in-with-x payload, or the header's base64 of one */
export const SIGN_IN_META = 'x402/sign-in-with-x';

/** The resource URI of one paid file: the payment (as GET /api/v1/payments/:id names it) and the media id. */
export const mediaResourceUri = (payment: string, media: string) => `x402-ai://payments/${encodeURIComponent(payment)}/media/${encodeURIComponent(media)}`;

/**
 * How long clients and shared caches may keep what is the same for every caller and fixed for the process's life
 * (2026-07-28 caching hints): the lists, the price list, the catalog.
 */
export const PUBLIC_HINT: CacheHint = { ttlMs: 300_000, cacheScope: 'public' };
/** One payer's file: it never changes while it is kept, and is that payer's alone. */
const PAYER_HINT: CacheHint = { ttlMs: 3_600_000, cacheScope: 'private' };

export interface ResourceDeps {
  config: Config;
  catalog: ModelCatalog;
  gate: Pick<PaymentGate, 'enabledNetworks'>;
  ledger: Ledger;
  media: MediaStore;
}

export interface ResourceListings {
  prices: Record<string, unknown>;
  models: Record<string, unknown>;
}

/** The price list: each paid tool's price range, and how each model is priced, in atomic units and in USDC. */
export function resourceListings(deps: Omit<ResourceDeps, 'ledger' | 'media'>, tools: readonly PaidTool[], models: Record<string, unknown>): ResourceListings {
  const prices = {
    currency: { asset: 'USDC', decimals: 6 },
    networks: deps.gate.enabledNetworks.map((name) => ({ name, caip2: NETWORKS[name].caip2 })),
    tools: tools.map((tool) => {
      const range = capabilityPriceRange(deps.catalog.models, tool.operation.capability, deps.config.bodyLimitBytes)!;
      return {
        tool: tool.name,
        resource: toolResource(tool.name),
        price: { min: range.min.toString(), max: range.max.toString(), minUsdc: formatUsdc(range.min), maxUsdc: formatUsdc(range.max) },
        models: deps.catalog.models.filter((model) => model.capability === tool.operation.capability).map((model) => ({ id: model.id, price: priceText(model) })),
      };
    }),
  };
  return { prices, models };
}

const json = (uri: string, value: unknown): ReadResourceResult => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] });

export function registerResources(server: McpServer, listings: ResourceListings, deps: ResourceDeps, origin: string): void {
  server.registerResource('prices', PRICES_URI, { title: 'Price list', description: 'What each paid tool costs, by model, in USDC', mimeType: 'application/json', cacheHint: PUBLIC_HINT }, (uri) =>
    json(uri.href, listings.prices),
  );
  server.registerResource('models', MODELS_URI, { title: 'Model catalog', description: 'The models of each paid tool, their limits and prices', mimeType: 'application/json', cacheHint: PUBLIC_HINT }, (uri) =>
    json(uri.href, listings.models),
  );
  server.registerResource(
    'paid-media',
    new ResourceTemplate(MEDIA_TEMPLATE, { list: undefined }),
    {
      title: 'A paid image or audio',
      description: `An image or audio a paid tool made, for its payer: sign in as the payer in _meta["${SIGN_IN_META}"]`,
      cacheHint: PAYER_HINT,
    },
    async (uri, variables, ctx) => readPaidMedia(uri.href, String(variables.payment), String(variables.media), ctx, deps, origin),
  );
}

async function readPaidMedia(uri: string, payment: string, media: string, ctx: ServerContext, deps: ResourceDeps, origin: string): Promise<ReadResourceResult> {
  const payer = await payerOf(deps.ledger, decodeURIComponent(payment), decodeURIComponent(media));
  const info = payer && isMediaId(media) ? await deps.media.info(media) : undefined;
  if (!payer || !info) throw new ResourceNotFoundError(uri, 'no such paid file (it may be past its retention)');
  const address = await signedIn(ctx, deps, origin);
  if (!isSamePayer(address, payer)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${address} did not pay for ${uri}; only its payer may read it`);
  return { contents: [{ uri, mimeType: info.contentType, blob: await base64Of(deps.media, media) }] };
}

/**
 * Who paid for `media` under `payment`: a settled payment whose result holds it, or a charge on a payment channel
 * whose result does (a channel's payer reads only what its own charges made).
 */
async function payerOf(ledger: Ledger, payment: string, media: string): Promise<string | undefined> {
  const records = await findPayments(ledger, payment);
  if (records.length > 0) return records.find((record) => record.state === 'settled' && record.result?.media.includes(media))?.payer;
  return (await ledger.channels?.chargeHolding(payment, media))?.payer;
}

/** The address a sign-in in `_meta` proves, the way SIGN-IN-WITH-X does on HTTP (origin-bound, single-use nonce). */
async function signedIn(ctx: ServerContext, deps: ResourceDeps, origin: string): Promise<string> {
  const proof = ctx.mcpReq._meta?.[SIGN_IN_META] as string | SIWxPayload | undefined;
  if (proof === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `a paid file is its payer's: sign in with _meta["${SIGN_IN_META}"] (sign-in-with-x, for this origin)`);
  try {
    const header = typeof proof === 'string' ? proof : encodeSIWxHeader(proof);
    return (await verifySignIn(header, origin, deps.gate.enabledNetworks, deps.ledger)).address;
  } catch (error) {
    const apiError = toApiError(error);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `_meta["${SIGN_IN_META}"]: ${apiError?.message ?? 'not a sign-in-with-x payload'}`);
  }
}

/** A stored file's bytes, base64 (MCP carries binary content so). */
export async function base64Of(media: MediaStore, id: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of await media.read(id)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('base64');
}
