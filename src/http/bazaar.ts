// The x402 v2 `bazaar` extension of a paid route (discovery by cataloguing facilitators): info.input (an http
// POST with a JSON example body) and info.output (an example 200 body), with JSON Schemas of both generated from
// the endpoint's zod schemas, the same that validate requests and write /openapi.json. Built with
// @x402/extensions' own declareDiscoveryExtension, so its shape is the reference's.
//
// It travels in every PAYMENT-REQUIRED header, so the schemas are compacted: descriptions (they are in
// /openapi.json) and the meaningless "at most Number.MAX_SAFE_INTEGER" bounds are left out.
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { Endpoint } from '../api/endpoint.ts';
import type { ModelCatalog } from '../providers/catalog.ts';
import { jsonSchema } from './openapi-schema.ts';

export const BAZAAR = 'bazaar';

/** The route's bazaar extension for a given origin (media URLs of the example are absolute); undefined without an example or a model. */
export type BazaarForOrigin = (origin: string) => Record<string, unknown>;

export function bazaarExtension(endpoint: Endpoint, catalog: ModelCatalog): BazaarForOrigin | undefined {
  if (!endpoint.example) return undefined;
  const model = catalog.models.some((m) => m.capability === endpoint.capability) ? catalog.resolve(endpoint.capability, undefined) : undefined;
  if (!model) return undefined;
  const inputSchema = compactSchema(jsonSchema(endpoint.requestSchema));
  const outputSchema = compactSchema(jsonSchema(endpoint.responseSchema, 'output'));
  const example = endpoint.example;
  const { request } = example(model, '');
  // declared as the official server does it: declareDiscoveryExtension, then its enrichDeclaration for the
  // HTTP method (info.input.method, and "method" required in the schema)
  const declared = declareDiscoveryExtension({ bodyType: 'json', input: request, inputSchema, output: { example: {}, schema: outputSchema } });
  const enrich = bazaarResourceServerExtension.enrichDeclaration!;
  const extension = enrich(declared[BAZAAR], { method: 'POST', adapter: { getPath: () => endpoint.path }, routePattern: endpoint.path }) as {
    info: Record<string, unknown>;
  };
  return (origin) => {
    const info = { ...extension.info, output: { type: 'json', example: example(model, origin).response } };
    return { ...extension, info };
  };
}

/** A JSON Schema without descriptions and without Number.MAX_SAFE_INTEGER bounds (zod's default for integers). */
export function compactSchema(schema: unknown): Record<string, unknown> {
  return strip(schema) as Record<string, unknown>;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'description') continue;
    if ((key === 'maximum' && child === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && child === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = strip(child);
  }
  return out;
}
