// A client's JSON Schema rewritten as a grammar node-llama-cpp can decode under (GbnfJsonSchema), so that
// every answer the embedded engine can produce both validates against the client's schema and ends soon.
//
// A toy model under a grammar may ramble as long as the grammar lets it, so every unbounded repetition is
// bounded here (the bounds only narrow what the schema allows, never widen it):
// - strings: at most STRING_MAX characters (or the schema's maxLength when smaller; minLength kept);
//   formats date, time and date-time are decoded as such; email, uri and uuid become one fixed example
// - arrays: at most ARRAY_MAX items (at least the schema's minItems); uniqueItems arrays at most one item
// - objects: every listed property is written (written optional ones are valid too), no other property; an
//   object listing no properties (a map) is written empty, since its keys would be free strings
// - numbers with bounds (minimum, maximum, exclusive ones, multipleOf) become an enum of a few values that
//   satisfy them; unbounded numbers keep llama.cpp's grammar (at most 16 digits)
// - $ref (to #/$defs/... or #/definitions/...) is inlined, at most MAX_DEPTH levels deep
// - a string with a pattern is written as a fixed example the pattern accepts (a date, a uuid, a word...)
// What cannot be honoured this way (a pattern no example fits, not, if/then/else, allOf, contains, ...) is
// refused by name (UnsupportedSchemaError): the API turns it into a 400 naming the field, before any price.
import type { JSONSchema7, JSONSchema7Definition } from '@ai-sdk/provider';
import type { GbnfJsonSchema } from 'node-llama-cpp';

export const STRING_MAX = 24;
export const ARRAY_MAX = 3;
export const MAX_DEPTH = 8;
const ENUM_SAMPLES = 5;

export class UnsupportedSchemaError extends Error {
  override name = 'UnsupportedSchemaError';
  /** JSON pointer of the part at fault, within the schema */
  readonly pointer: string;
  constructor(pointer: string, why: string) {
    super(`${pointer || '/'}: ${why}`);
    this.pointer = pointer;
  }
}

/** keywords that only describe, or that the bounds below cover: never a reason to refuse */
const DESCRIPTIVE = new Set([
  '$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly',
  '$defs', 'definitions', 'type', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems', 'uniqueItems',
  'minLength', 'maxLength', 'format', 'enum', 'const', 'anyOf', 'oneOf', '$ref', 'minimum', 'maximum', 'exclusiveMinimum',
  'exclusiveMaximum', 'multipleOf', 'minProperties', 'maxProperties', 'nullable', 'strict', 'contentEncoding', 'contentMediaType',
  'pattern',
]);

/** what a string with a `pattern` may be: the first of these the pattern (and the length bounds) accept */
const PATTERN_CANDIDATES = [
  '2026-01-01', '12:00:00', '2026-01-01T12:00:00Z', '2026-01-01T12:00:00.000Z', 'demo@example.com', 'https://example.com/',
  '00000000-0000-4000-8000-000000000000', 'example.com', '192.0.2.1', 'demo', 'Demo', 'DEMO', 'a', 'A', '0', '1', 'abc', 'ABC', '123',
  'demo-1', 'demo_1', 'a1', 'A1', 'aa', 'AA', '00', '+1', '-1', '1.0', 'P1D', 'true', 'x', 'X',
];

const FIXED_FORMATS: Record<string, string> = {
  email: 'demo@example.com',
  'idn-email': 'demo@example.com',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  url: 'https://example.com/',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

/** The grammar schema for `schema`; throws UnsupportedSchemaError naming the first part it cannot honour. */
export function boundedJsonSchema(schema: JSONSchema7): GbnfJsonSchema {
  return bound(schema, schema, '', 0);
}

function bound(node: JSONSchema7Definition, root: JSONSchema7, pointer: string, depth: number): GbnfJsonSchema {
  if (depth > MAX_DEPTH) throw new UnsupportedSchemaError(pointer, `nested deeper than ${MAX_DEPTH} levels (a recursive $ref?)`);
  if (node === true) return anyValue(depth);
  if (node === false) throw new UnsupportedSchemaError(pointer, 'the schema false accepts no value');
  if (typeof node !== 'object' || node === null || Array.isArray(node)) throw new UnsupportedSchemaError(pointer, 'not a schema object');
  for (const keyword of Object.keys(node)) {
    if (!DESCRIPTIVE.has(keyword)) throw new UnsupportedSchemaError(pointer, `the keyword ${keyword} is not supported`);
  }
  if (node.$ref !== undefined) {
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(node.$ref);
    const target = match ? (root as Record<string, Record<string, JSONSchema7Definition> | undefined>)[match[1]!]?.[decodeURIComponent(match[2]!)] : undefined;
    if (target === undefined) throw new UnsupportedSchemaError(pointer, `$ref ${node.$ref} does not name a schema under #/$defs or #/definitions`);
    return bound(target, root, `${pointer}/$ref`, depth + 1);
  }
  if (node.const !== undefined) return { const: literal(node.const, `${pointer}/const`) };
  if (node.enum !== undefined) {
    if (node.enum.length === 0) throw new UnsupportedSchemaError(`${pointer}/enum`, 'an empty enum accepts no value');
    return { enum: node.enum.map((value: unknown, i: number) => literal(value, `${pointer}/enum/${i}`)) };
  }
  const branches = node.oneOf ?? node.anyOf;
  if (branches !== undefined) {
    const keyword = node.oneOf ? 'oneOf' : 'anyOf';
    if (branches.length === 0) throw new UnsupportedSchemaError(`${pointer}/${keyword}`, 'no branch');
    return { oneOf: branches.map((branch: JSONSchema7Definition, i: number) => bound(branch, root, `${pointer}/${keyword}/${i}`, depth + 1)) };
  }
  const types = node.type === undefined ? inferredTypes(node) : Array.isArray(node.type) ? node.type : [node.type];
  if (types.length === 0) return anyValue(depth);
  const perType = types.map((type: string) => boundType(type, node, root, pointer, depth));
  return perType.length === 1 ? perType[0]! : { oneOf: perType };
}

function inferredTypes(node: JSONSchema7): string[] {
  if (node.properties !== undefined || node.additionalProperties !== undefined) return ['object'];
  if (node.items !== undefined) return ['array'];
  if (node.minLength !== undefined || node.maxLength !== undefined || node.format !== undefined) return ['string'];
  if (node.minimum !== undefined || node.maximum !== undefined || node.multipleOf !== undefined) return ['number'];
  return [];
}

function boundType(type: string, node: JSONSchema7, root: JSONSchema7, pointer: string, depth: number): GbnfJsonSchema {
  switch (type) {
    case 'null':
    case 'boolean':
      return { type };
    case 'string':
      return boundString(node, pointer);
    case 'integer':
    case 'number':
      return boundNumber(type, node, pointer);
    case 'array':
      return boundArray(node, root, pointer, depth);
    case 'object':
      return boundObject(node, root, pointer, depth);
    default:
      throw new UnsupportedSchemaError(`${pointer}/type`, `unknown type ${type}`);
  }
}

function boundString(node: JSONSchema7, pointer: string): GbnfJsonSchema {
  if (node.pattern !== undefined) return patternExample(node, pointer);
  const format = node.format;
  if (format === 'date' || format === 'time' || format === 'date-time') return { type: 'string', format };
  if (format !== undefined) {
    const fixed = FIXED_FORMATS[format];
    if (fixed === undefined) throw new UnsupportedSchemaError(`${pointer}/format`, `the string format ${format} is not supported`);
    return { const: fixed };
  }
  const minLength = node.minLength ?? 0;
  if (minLength > 256) throw new UnsupportedSchemaError(`${pointer}/minLength`, 'at most 256 here');
  const maxLength = Math.max(minLength, Math.min(node.maxLength ?? STRING_MAX, STRING_MAX));
  if (node.maxLength !== undefined && node.maxLength < minLength) throw new UnsupportedSchemaError(`${pointer}/maxLength`, 'below minLength');
  return { type: 'string', ...(minLength > 0 ? { minLength } : {}), maxLength };
}

/**
 * A string with a regular expression: a grammar cannot follow one, so it is written as a fixed example the
 * pattern accepts (a date, a uuid, an email, a short word...), or refused when none does.
 */
function patternExample(node: JSONSchema7, pointer: string): GbnfJsonSchema {
  let pattern: RegExp;
  try {
    pattern = new RegExp(node.pattern as string, 'u');
  } catch {
    throw new UnsupportedSchemaError(`${pointer}/pattern`, 'not a valid regular expression');
  }
  const fits = (text: string) =>
    pattern.test(text) && [...text].length >= (node.minLength ?? 0) && [...text].length <= (node.maxLength ?? Infinity) && (node.format === undefined || FORMAT_EXAMPLES[node.format] === undefined || FORMAT_EXAMPLES[node.format] === text);
  const example = PATTERN_CANDIDATES.find(fits);
  if (example === undefined) throw new UnsupportedSchemaError(`${pointer}/pattern`, 'the keyword pattern is not supported for this expression (no fixed example matches it)');
  return { const: example };
}

/** the example a format is written as when a pattern comes with it */
const FORMAT_EXAMPLES: Record<string, string> = { date: '2026-01-01', time: '12:00:00', 'date-time': '2026-01-01T12:00:00Z' };

/** A bounded number: a few values that satisfy every bound, spread across the allowed range. */
function boundNumber(type: 'integer' | 'number', node: JSONSchema7, pointer: string): GbnfJsonSchema {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = node;
  if ([minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf].every((v) => v === undefined)) return { type };
  const step = multipleOf ?? 1;
  if (!(step > 0)) throw new UnsupportedSchemaError(`${pointer}/multipleOf`, 'must be positive');
  const fits = (value: number) =>
    (minimum === undefined || value >= minimum) &&
    (maximum === undefined || value <= maximum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) &&
    (exclusiveMaximum === undefined || value < exclusiveMaximum) &&
    (type === 'number' || Number.isInteger(value)) &&
    (multipleOf === undefined || Number.isInteger(Number((value / multipleOf).toFixed(9))));
  const low = Math.max(minimum ?? -Infinity, exclusiveMinimum ?? -Infinity);
  const high = Math.min(maximum ?? Infinity, exclusiveMaximum ?? Infinity);
  // candidates: multiples of the step (of 1 for integers) from the low end, or the high end, or zero; then,
  // for a bounded range, points spread inside it
  const unit = type === 'integer' && !Number.isInteger(step) ? 1 : step;
  const start = Number.isFinite(low) ? Math.ceil(low / unit) * unit : Number.isFinite(high) ? Math.floor(high / unit) * unit - unit * (ENUM_SAMPLES - 1) : 0;
  const span = Number.isFinite(low) && Number.isFinite(high) ? Math.max(1, Math.floor((high - start) / unit / (ENUM_SAMPLES - 1))) : 1;
  const candidates: number[] = [];
  for (let i = 0; i < ENUM_SAMPLES * 4; i++) candidates.push(start + i * span * unit);
  if (Number.isFinite(low) && Number.isFinite(high)) {
    for (let k = 1; k <= ENUM_SAMPLES; k++) candidates.push(low + ((high - low) * k) / (ENUM_SAMPLES + 1));
  }
  const values: number[] = [];
  for (const candidate of candidates) {
    const value = type === 'integer' ? Math.round(candidate) : Number(candidate.toFixed(6));
    if (values.length < ENUM_SAMPLES && fits(value) && !values.includes(value)) values.push(value);
  }
  if (values.length === 0) throw new UnsupportedSchemaError(pointer, 'no number found that satisfies its bounds');
  return { enum: values };
}

function boundArray(node: JSONSchema7, root: JSONSchema7, pointer: string, depth: number): GbnfJsonSchema {
  if (Array.isArray(node.items)) throw new UnsupportedSchemaError(`${pointer}/items`, 'tuple items (an array of schemas) are not supported');
  const minItems = node.minItems ?? 0;
  if (minItems > 16) throw new UnsupportedSchemaError(`${pointer}/minItems`, 'at most 16 here');
  const cap = node.uniqueItems ? 1 : ARRAY_MAX;
  if (node.uniqueItems && minItems > 1) throw new UnsupportedSchemaError(`${pointer}/uniqueItems`, 'unique items with minItems above 1 are not supported');
  const maxItems = Math.max(minItems, Math.min(node.maxItems ?? cap, cap));
  const items = node.items === undefined ? anyValue(depth + 1) : bound(node.items, root, `${pointer}/items`, depth + 1);
  return { type: 'array', items, ...(minItems > 0 ? { minItems } : {}), maxItems };
}

function boundObject(node: JSONSchema7, root: JSONSchema7, pointer: string, depth: number): GbnfJsonSchema {
  const properties = Object.entries(node.properties ?? {});
  for (const name of node.required ?? []) {
    if (!(node.properties && name in node.properties) && properties.length > 0) {
      throw new UnsupportedSchemaError(`${pointer}/required`, `${name} is required but not among the properties`);
    }
  }
  if (properties.length === 0) {
    // a map: its keys would be free strings the grammar cannot bound, so it is written empty
    if ((node.minProperties ?? 0) > 0) throw new UnsupportedSchemaError(`${pointer}/minProperties`, 'an object without listed properties is written empty here');
    return { type: 'object', additionalProperties: false };
  }
  if (node.minProperties !== undefined && node.minProperties > properties.length) {
    throw new UnsupportedSchemaError(`${pointer}/minProperties`, 'more properties than the schema lists');
  }
  if (node.maxProperties !== undefined && node.maxProperties < properties.length) {
    throw new UnsupportedSchemaError(`${pointer}/maxProperties`, 'fewer properties than the schema lists (every listed property is written)');
  }
  const bounded: Record<string, GbnfJsonSchema> = {};
  for (const [name, value] of properties) bounded[name] = bound(value, root, `${pointer}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1);
  return { type: 'object', properties: bounded, required: properties.map(([name]) => name), additionalProperties: false };
}

/** Any JSON value, bounded: a short string, a number, a boolean, null, or (near the top) a short array of those. */
function anyValue(depth: number): GbnfJsonSchema {
  const scalars: GbnfJsonSchema[] = [{ type: 'string', maxLength: STRING_MAX }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }];
  if (depth >= 2) return { oneOf: scalars };
  return { oneOf: [...scalars, { type: 'array', items: { oneOf: scalars }, maxItems: ARRAY_MAX }] };
}

/** What json_object (any JSON object) is decoded as: an object with one short string, `answer`. */
export const JSON_OBJECT_SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
} as const;

function literal(value: unknown, pointer: string): string | number | boolean | null {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  throw new UnsupportedSchemaError(pointer, 'only string, number, boolean and null literals are supported');
}
