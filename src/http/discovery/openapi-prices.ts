// Prices in /openapi.json, where people read them (/docs renders each operation's description): every
// paid operation lists its models with what a call costs in decimal USDC. The 402 answer still carries the
// exact amount for one body, in atomic units.
import type { Capability } from '../../config/schema.ts';
import type { PaidOperation } from '../paid/operations.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { priceText } from '../../pricing/price-text.ts';

function priceTable(capability: Capability, catalog: ModelCatalog): string {
  const rows = catalog.models
    .filter((model) => model.capability === capability)
    .map((model) => `| \`${model.id}\` | ${priceText(model)} |`);
  return [
    '**Prices** in USDC (the 402 answer quotes the exact amount for your body in atomic units: 1 USDC = 1,000,000):',
    '',
    '| model | price |',
    '|---|---|',
    ...rows,
  ].join('\n');
}

/** The document with each paid route's description followed by its operation's price table. */
export function withPrices(openapi: Record<string, unknown>, operations: readonly PaidOperation[], catalog: ModelCatalog): Record<string, unknown> {
  const paths = { ...(openapi.paths as Record<string, Record<string, { description?: string }>>) };
  for (const { capability, routes } of operations) {
    for (const { path } of routes) {
      const post = paths[path]?.post;
      if (!post) continue;
      const description = [post.description, priceTable(capability, catalog)].filter(Boolean).join('\n\n');
      paths[path] = { ...paths[path], post: { ...post, description } };
    }
  }
  return { ...openapi, paths };
}
