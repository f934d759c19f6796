// The x402 v2 `bazaar` extension of a paid route (discovery by cataloguing facilitators): info.input (an http
// POST with a JSON example body) and info.output (an example 200 body), with JSON Schemas of both generated from
// the endpoint's zod schemas, the same that validate requests and write /openapi.json. Built with
// @x402/extensions' own declareDiscoveryExtension, so its shape is the reference's.
//
// It travels in every PAYMENT-REQUIRED header, so the schemas are compacted: descriptions (they are in
// /openapi.json) and the meaningless "at most Number.MAX_SAFE_INTEGER" bounds are left out.
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { Endpoint } from '../../api/endpoint.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { jsonSchema } from './openapi-schema.ts';

export const BAZAAR = 'bazaar';

/** The route's bazaar extension for a given origin (media URLs of the example are absolute); undefined without an example or a model. */
export type BazaarForOrigin = (origin: string) => Record<string, unknown>;

export function bazaarExtension(endpoint: Endpoint, catalog: ModelCatalog): BazaarForOrigin | undefined {
  if (!endpoint.example) return undefined;
  const model = catalog.models.some((m) => m.capability === endpoint.capability) ? catalog.resolve(endpoint.capability, undefined) : undefined;
  if (!model) return undefined;
  // where declareDiscoveryExtension mounts each schema inside the extension's schema (for internal $refs)
  const inputSchema = compactSchema(jsonSchema(endpoint.requestSchema), '#/properties/input/properties/body');
  const outputSchema = compactSchema(jsonSchema(endpoint.responseSchema, 'output'), '#/properties/output/properties/example');
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

/**
 * A JSON Schema without descriptions, without Number.MAX_SAFE_INTEGER bounds (zod's default for integers), and
 * with each repeated sizeable subschema (chat's `input` is `messages` again) written once: later copies become a
 * `$ref` to the first, a JSON pointer from the root of the document the schema is mounted in at `mountPointer`
 * (internal references are what @x402/extensions' validator accepts).
 */
export function compactSchema(schema: unknown, mountPointer: string): Record<string, unknown> {
  const seen = new Map<string, string>();
  return strip(schema, mountPointer, seen, true) as Record<string, unknown>;
}

/** keywords whose value maps names to subschemas: the map itself is no schema and cannot be referred to */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** subschemas shorter than this are cheaper written again than referred to */
const MIN_SHARED_CHARS = 80;

function strip(value: unknown, pointer: string, seen: Map<string, string>, isSchema: boolean): unknown {
  if (Array.isArray(value)) return value.map((item, index) => strip(item, `${pointer}/${index}`, seen, isSchema));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'description') continue;
    if ((key === 'maximum' && child === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && child === Number.MIN_SAFE_INTEGER)) continue;
    // a schema's keywords hold schemas (or values), except the maps whose entries are schemas
    const childIsSchema = isSchema ? !SCHEMA_MAPS.has(key) : true;
    out[key] = strip(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, seen, childIsSchema);
  }
  const text = JSON.stringify(out);
  if (!isSchema || text.length < MIN_SHARED_CHARS) return out;
  const first = seen.get(text);
  if (first) return { $ref: first };
  seen.set(text, pointer);
  return out;
}
