// How agents and catalogues find what this gateway sells, generated from the endpoints, the catalog and the
// price table (never hand-written, so it cannot drift from what a 402 asks):
// - GET /.well-known/x402: { version: 1, resources: [absolute URLs of the paid routes], description }
//   (the x402scan / agentcash format);
// - x-payment-info on every paid operation of /openapi.json: the price range in USD(C) and the protocol;
// - GET /llms.txt: the same in plain text for a language model: what is sold, at what price, how to pay.
import { Hono } from 'hono';
import type { PaidOperation } from '../paid/operations.ts';
import type { Config } from '../../config/load.ts';
import type { ModelConfig } from '../../config/schema.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { capabilityPriceRange, modelPriceRange, type PriceRange } from '../../pricing/price-range.ts';
import { formatUsdc } from '../../pricing/usdc.ts';
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import { requestOrigin } from '../origin.ts';

export interface DiscoveryDeps {
  config: Config;
  /** what is sold, on which routes (paid/operations.ts) */
  operations: readonly PaidOperation[];
  catalog: ModelCatalog;
  networks: readonly NetworkName[];
  /** the paid tools of /mcp, when it is served (src/http/mcp/) */
  mcpTools?: readonly string[];
}

/** An operation with no model in the catalog can never be paid for: it is not advertised. */
function paidOperations({ operations, catalog, config }: DiscoveryDeps): { operation: PaidOperation; range: PriceRange }[] {
  return operations.flatMap((operation) => {
    const range = capabilityPriceRange(catalog.models, operation.capability, config.bodyLimitBytes);
    return range ? [{ operation, range }] : [];
  });
}

/** x-payment-info of one paid operation (price mode "dynamic": the price depends on the body). */
export function paymentInfo(range: PriceRange): Record<string, unknown> {
  return {
    price: { mode: 'dynamic', min: formatUsdc(range.min), max: formatUsdc(range.max), currency: 'USD' },
    protocols: [{ x402: {} }],
  };
}

/** x-payment-info per paid route path, for the OpenAPI document. */
export function paymentInfoByPath(deps: DiscoveryDeps): Map<string, Record<string, unknown>> {
  return new Map(paidOperations(deps).flatMap(({ operation, range }) => operation.routes.map((route) => [route.path, paymentInfo(range)] as const)));
}

export function wellKnownX402(deps: DiscoveryDeps, origin: string): Record<string, unknown> {
  return {
    version: 1,
    resources: paidOperations(deps).flatMap(({ operation }) => operation.routes.map((route) => `${origin}${route.path}`)),
    description: deps.config.service.description,
    ...(deps.mcpTools ? { mcp: mcpEntry(deps.mcpTools, origin) } : {}),
  };
}

/** Where the same generation is sold as MCP tools, paid inside the MCP messages (x402's MCP transport). */
function mcpEntry(tools: readonly string[], origin: string): Record<string, unknown> {
  return {
    url: `${origin}/mcp`,
    transport: 'streamable-http',
    serverJson: `${origin}/mcp/server.json`,
    tools: tools.map((name) => ({ name, resource: `mcp://tool/${name}` })),
  };
}

const usdc = (atomic: bigint) => `${formatUsdc(atomic)} USDC`;
const span = ({ min, max }: PriceRange) => (min === max ? usdc(min) : `${usdc(min)} to ${usdc(max)}`);

function priceRule(model: ModelConfig): string {
  switch (model.capability) {
    case 'chat': {
      const { perRequest, perThousandOutputTokens, perThousandInputChars } = model.price;
      return `${usdc(BigInt(perRequest))} per call + ${usdc(BigInt(perThousandOutputTokens))} per 1,000 tokens of max_tokens (default ${model.defaultMaxTokens}, at most ${model.maxTokens}) + ${usdc(BigInt(perThousandInputChars))} per 1,000 characters of input`;
    }
    case 'image':
      return `${Object.entries(model.price.perImageBySize)
        .filter(([size]) => model.sizes.includes(size))
        .map(([size, price]) => `${size} ${usdc(BigInt(price))}`)
        .join(', ')} per image (default ${model.defaultSize}, n up to ${model.maxN})`;
    case 'speech':
      return `${usdc(BigInt(model.price.perRequest))} per call + ${usdc(BigInt(model.price.perThousandChars))} per 1,000 characters of text (at most ${model.maxTextLength}); formats ${model.formats.join(', ')}`;
  }
}

export function llmsTxt(deps: DiscoveryDeps, origin: string): string {
  const { config, catalog, networks } = deps;
  const lines = [`# ${config.service.name}`, '', `> ${config.service.description}`, '', '## What is sold', ''];
  for (const { operation, range } of paidOperations(deps)) {
    const [spec, ...others] = operation.routes;
    lines.push(`### POST ${origin}${spec!.path}`, '', `${operation.endpoint.summary}. Price per call: ${span(range)}, computed from the body.`, '');
    if (others.length > 0) lines.push(`The same, in other APIs' dialects: ${others.map((route) => `POST ${origin}${route.path} (${route.surface})`).join(', ')}.`, '');
    for (const model of catalog.models.filter((m) => m.capability === operation.capability)) {
      lines.push(`- model \`${model.id}\`${model.label ? ` (${model.label})` : ''}: ${priceRule(model)}; a call costs ${span(modelPriceRange(model, config.bodyLimitBytes))}`);
    }
    lines.push('');
  }
  lines.push(
    '## How to pay (x402)',
    '',
    '1. POST the JSON body without payment. The answer is 402 with the exact price of that body: the x402 v1 JSON body',
    '   (`accepts[]`, amounts in USDC atomic units, 6 decimals) and, for x402 v2 clients, the same offer in the',
    '   `PAYMENT-REQUIRED` header. Send `X-Network` to pick a network.',
    '2. Sign the offered payment with any x402 client (`@x402/fetch`, `x402-fetch`) and repeat the same request with the',
    '   proof in `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1).',
    '3. The 200 carries the result; the settlement receipt is in `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1).',
    '   Nothing is charged for a request that fails. A proof pays for one call only.',
    '4. To fetch a paid result again, sign in with the paying wallet (the `sign-in-with-x` extension of the 402).',
    '',
    `Networks: ${networks.map((name) => `${name} (${NETWORKS[name].caip2})`).join(', ')}. Asset: USDC.`,
    '',
    ...mcpSection(deps.mcpTools, origin),
    '## More',
    '',
    `- [OpenAPI document](${origin}/openapi.json): request and response schemas, x-payment-info per paid operation`,
    `- [Models, limits and prices](${origin}/api/v1/ai/models)`,
    `- [x402 discovery](${origin}/.well-known/x402)`,
    `- [Documentation](${origin}/docs)`,
    '',
  );
  return lines.join('\n');
}

function mcpSection(tools: readonly string[] | undefined, origin: string): string[] {
  if (!tools) return [];
  return [
    '## As MCP tools',
    '',
    `The same generation is served as MCP tools (${tools.map((name) => `\`${name}\``).join(', ')}, and the free \`list_models\`) at`,
    `${origin}/mcp (Streamable HTTP, stateless). A tool called without payment returns the x402 PaymentRequired for that input`,
    '(isError, structuredContent); call it again with the signed PaymentPayload in `_meta["x402/payment"]`; the receipt comes',
    `back in \`_meta["x402/payment-response"]\`. Registry entry: ${origin}/mcp/server.json.`,
    '',
  ];
}

export function discoveryRoutes(deps: DiscoveryDeps): Hono {
  const app = new Hono();
  app.get('/.well-known/x402', (c) => c.json(wellKnownX402(deps, requestOrigin(c, deps.config))));
  app.get('/llms.txt', (c) => c.text(llmsTxt(deps, requestOrigin(c, deps.config))));
  return app;
}
