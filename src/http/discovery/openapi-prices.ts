// Prices in /openapi.json, where people read them (/docs renders each operation's description): every
// paid operation lists its models with what a call costs in decimal USDC. The 402 answer still carries the
// exact amount for one body, in atomic units.
import type { Endpoint } from '../../api/endpoint.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { priceText } from '../../pricing/price-text.ts';

function priceTable(endpoint: Endpoint, catalog: ModelCatalog): string {
  const rows = catalog.models
    .filter((model) => model.capability === endpoint.capability)
    .map((model) => `| \`${model.id}\` | ${priceText(model)} |`);
  return [
    '**Prices** in USDC (the 402 answer quotes the exact amount for your body in atomic units: 1 USDC = 1,000,000):',
    '',
    '| model | price |',
    '|---|---|',
    ...rows,
  ].join('\n');
}

/** The document with each paid operation's description followed by its price table. */
export function withPrices(openapi: Record<string, unknown>, endpoints: readonly Endpoint[], catalog: ModelCatalog): Record<string, unknown> {
  const paths = { ...(openapi.paths as Record<string, Record<string, { description?: string }>>) };
  for (const endpoint of endpoints) {
    const operation = paths[endpoint.path]?.post;
    if (!operation) continue;
    const description = [operation.description, priceTable(endpoint, catalog)].filter(Boolean).join('\n\n');
    paths[endpoint.path] = { ...paths[endpoint.path], post: { ...operation, description } };
  }
  return { ...openapi, paths };
}
