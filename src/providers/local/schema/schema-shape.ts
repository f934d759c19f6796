// A client's JSON Schema read into the shapes the grammar writer knows (shape-grammar.ts): types with their
// bounds, objects, arrays, choices, literals, references. Reading is bounded by the schema's own size, whatever
// the schema says: each subschema is read once (a $ref target too, however many places name it: references stay
// references), at most MAX_SCHEMA_NODES of them per request, at most MAX_NESTING deep (a reference's target read
// one level below it), with counts that ask for at least so many items, properties or characters at most MAX_LEAST,
// so a refusal costs milliseconds.
// Keywords a grammar cannot state are left free (never a refusal): not, if/then/else, contains, dependent*,
// patternProperties, propertyNames, unevaluated*, and a second pattern on one string. The engine checks every
// answer against the whole schema with Ajv, so what is left free is still checked.
// allOf is honoured by merging its members into one shape (properties, bounds, types).

import { parsePattern } from './linear-regexp.ts';

/** subschemas read per request (every tool's parameters and the response schema together) */
export const MAX_SCHEMA_NODES = 10_000;
/** how deep a schema's nesting may go, a reference's target counting one level below the reference */
export const MAX_NESTING = 64;
/**
 * the most a schema may ask for at least (minItems, minProperties, minLength): no answer of an embedded engine is that
 * long, and the grammar writer lays out each required item, so a larger count would only cost time before the refusal
 */
export const MAX_LEAST = 10_000;
/** union branches kept when allOf combines choices (each is a whole shape) */
const MAX_BRANCHES = 64;

export class UnsupportedSchemaError extends Error {
  override name = 'UnsupportedSchemaError';
  /** JSON pointer of the part at fault, within the schema */
  readonly pointer: string;
  constructor(pointer: string, why: string) {
    super(`${pointer || '/'}: ${why}`);
    this.pointer = pointer;
  }
}

export type Literal = null | boolean | number | string | readonly Literal[] | { readonly [key: string]: Literal };

export interface NumberBounds {
  minimum?: number | undefined;
  maximum?: number | undefined;
  exclusiveMinimum?: number | undefined;
  exclusiveMaximum?: number | undefined;
  multipleOf?: number | undefined;
}

export type Shape =
  | { kind: 'any' }
  | { kind: 'never' }
  | { kind: 'null' }
  | { kind: 'boolean' }
  | { kind: 'literals'; values: Literal[] }
  | { kind: 'string'; minLength: number; maxLength: number | undefined; format: string | undefined; patterns: string[] }
  | ({ kind: 'number'; integer: boolean } & NumberBounds)
  | {
      kind: 'object';
      properties: Map<string, Shape>;
      required: Set<string>;
      /** what other keys may hold (false: none) */
      additional: Shape | false;
      minProperties: number;
      maxProperties: number | undefined;
    }
  | { kind: 'array'; prefix: Shape[]; items: Shape | false; minItems: number; maxItems: number | undefined; unique: boolean }
  | { kind: 'union'; options: Shape[] }
  | { kind: 'ref'; pointer: string };

export interface ShapedSchema {
  root: Shape;
  /** every reference target the schema names, by JSON pointer, read once */
  targets: Map<string, Shape>;
  /** subschemas read */
  nodes: number;
}

const ANY: Shape = { kind: 'any' };
const NEVER: Shape = { kind: 'never' };

/** A counter of the subschemas read for one request, shared by its schemas. */
export interface NodeAllowance {
  left: number;
}

type Raw = Record<string, unknown>;

/** Reads `schema`; throws UnsupportedSchemaError when it is too large or not a schema. */
export function shapeOf(schema: unknown, allowance: NodeAllowance = { left: MAX_SCHEMA_NODES }): ShapedSchema {
  const before = allowance.left;
  const targets = new Map<string, Shape>();
  const reading = new Set<string>();
  const count = (pointer: string, nodes = 1) => {
    allowance.left -= nodes;
    if (allowance.left < 0) throw new UnsupportedSchemaError(pointer, `the schemas of this request hold more than ${MAX_SCHEMA_NODES} subschemas`);
  };

  const target = (ref: string, pointer: string, depth: number): Shape => {
    if (!ref.startsWith('#')) throw new UnsupportedSchemaError(pointer, `$ref ${ref.slice(0, 100)} is not within the schema (only #... references are read)`);
    const path = decodeURIComponent(ref.slice(1));
    if (!targets.has(path) && !reading.has(path)) {
      let node: unknown = schema;
      for (const part of path.split('/').slice(1)) {
        const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
        node = node !== null && typeof node === 'object' && Object.hasOwn(node, key) ? (node as Raw)[key] : undefined;
      }
      if (node === undefined) throw new UnsupportedSchemaError(pointer, `$ref ${ref.slice(0, 100)} names nothing in the schema`);
      reading.add(path);
      // one level below the reference: a chain of references is as deep as its length, and bounded the same way
      targets.set(path, read(node, path, depth + 1));
      reading.delete(path);
    }
    return { kind: 'ref', pointer: path };
  };

  /** the shape a reference stands for, when known (one being read, a cycle, is left free) */
  const resolved = (shape: Shape): Shape => (shape.kind === 'ref' ? (targets.get(shape.pointer) ?? ANY) : shape);

  const read = (node: unknown, pointer: string, depth: number): Shape => {
    count(pointer);
    if (depth > MAX_NESTING) throw new UnsupportedSchemaError(pointer, `nested deeper than ${MAX_NESTING} levels`);
    if (node === true) return ANY;
    if (node === false) return NEVER;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) throw new UnsupportedSchemaError(pointer, 'not a schema (an object or a boolean)');
    const raw = node as Raw;
    // merging allOf members that hold choices multiplies the branches: each merge counts as a subschema read
    const merging: Merging = { resolved, tick: () => count(pointer) };
    const sub = (value: unknown, key: string) => read(value, `${pointer}/${key}`, depth + 1);
    const parts: Shape[] = [ownShape(raw, pointer, sub, count, merging)];
    if (typeof raw.$ref === 'string') parts.push(target(raw.$ref, `${pointer}/$ref`, depth));
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      const branches = raw[keyword];
      if (Array.isArray(branches) && branches.length > 0) parts.push(union(branches.map((branch, i) => sub(branch, `${keyword}/${i}`))));
    }
    if (Array.isArray(raw.allOf)) raw.allOf.forEach((member, i) => parts.push(sub(member, `allOf/${i}`)));
    const merged = parts.reduce((a, b) => intersect(a, b, merging));
    return raw.nullable === true ? union([merged, { kind: 'null' }]) : merged;
  };

  const root = read(schema, '', 0);
  return { root, targets, nodes: before - allowance.left };
}

/** The shape of a schema's own keywords: type, const/enum, and each type's bounds. */
function ownShape(raw: Raw, pointer: string, sub: (value: unknown, key: string) => Shape, count: (pointer: string, nodes?: number) => void, merging: Merging): Shape {
  if ('const' in raw) {
    count(`${pointer}/const`);
    return { kind: 'literals', values: [raw.const as Literal] };
  }
  let literals: Shape | undefined;
  if (Array.isArray(raw.enum)) {
    count(`${pointer}/enum`, raw.enum.length);
    literals = raw.enum.length === 0 ? NEVER : { kind: 'literals', values: raw.enum as Literal[] };
  }
  const types = typeof raw.type === 'string' ? [raw.type] : Array.isArray(raw.type) ? (raw.type as unknown[]) : inferredTypes(raw);
  if (types.length === 0) return literals ?? ANY;
  const shapes = types.map((type) => typeShape(type, raw, pointer, sub, count));
  const typed = union(shapes);
  return literals ? intersect(literals, typed, merging) : typed;
}

function inferredTypes(raw: Raw): string[] {
  const has = (...keys: string[]) => keys.some((key) => raw[key] !== undefined);
  const types: string[] = [];
  if (has('properties', 'additionalProperties', 'required', 'minProperties', 'maxProperties')) types.push('object');
  if (has('items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems')) types.push('array');
  if (has('minLength', 'maxLength', 'pattern', 'format')) types.push('string');
  if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')) types.push('number');
  return types;
}

const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

/** a count the schema asks for at least (undefined: none); refused past MAX_LEAST */
function least(raw: Raw, keyword: 'minItems' | 'minProperties' | 'minLength', pointer: string): number | undefined {
  const value = count(raw[keyword]);
  if (value !== undefined && value > MAX_LEAST) throw new UnsupportedSchemaError(`${pointer}/${keyword}`, `${keyword} ${value} asks for more than any answer holds (at most ${MAX_LEAST})`);
  return value;
}

function typeShape(type: unknown, raw: Raw, pointer: string, sub: (value: unknown, key: string) => Shape, counted: (pointer: string, nodes?: number) => void): Shape {
  switch (type) {
    case 'null':
      return { kind: 'null' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'string':
      if (typeof raw.pattern === 'string') checkPattern(raw.pattern, `${pointer}/pattern`);
      return {
        kind: 'string',
        minLength: least(raw, 'minLength', pointer) ?? 0,
        maxLength: count(raw.maxLength),
        format: typeof raw.format === 'string' ? raw.format : undefined,
        patterns: typeof raw.pattern === 'string' ? [raw.pattern] : [],
      };
    case 'integer':
    case 'number': {
      // draft-04's boolean exclusive bounds are read as draft-06's numbers
      const exclusiveMinimum = raw.exclusiveMinimum === true ? num(raw.minimum) : num(raw.exclusiveMinimum);
      const exclusiveMaximum = raw.exclusiveMaximum === true ? num(raw.maximum) : num(raw.exclusiveMaximum);
      return {
        kind: 'number',
        integer: type === 'integer',
        minimum: raw.exclusiveMinimum === true ? undefined : num(raw.minimum),
        maximum: raw.exclusiveMaximum === true ? undefined : num(raw.maximum),
        exclusiveMinimum,
        exclusiveMaximum,
        multipleOf: num(raw.multipleOf),
      };
    }
    case 'object': {
      const properties = new Map<string, Shape>();
      if (raw.properties !== null && typeof raw.properties === 'object') {
        for (const [name, value] of Object.entries(raw.properties as Raw)) properties.set(name, sub(value, `properties/${escapePointer(name)}`));
      }
      const additional = raw.additionalProperties === undefined ? ANY : sub(raw.additionalProperties, 'additionalProperties');
      if (raw.patternProperties !== null && typeof raw.patternProperties === 'object') {
        for (const pattern of Object.keys(raw.patternProperties)) {
          counted(`${pointer}/patternProperties`);
          checkPattern(pattern, `${pointer}/patternProperties/${escapePointer(pattern)}`);
        }
      }
      if (Array.isArray(raw.required)) counted(`${pointer}/required`, raw.required.length);
      return {
        kind: 'object',
        properties,
        required: new Set(Array.isArray(raw.required) ? raw.required.filter((name): name is string => typeof name === 'string') : []),
        additional: additional.kind === 'never' ? false : additional,
        minProperties: least(raw, 'minProperties', pointer) ?? 0,
        maxProperties: count(raw.maxProperties),
      };
    }
    case 'array': {
      // draft-07's tuple items (an array of schemas) and 2020-12's prefixItems both list the first items
      const tuple = Array.isArray(raw.items) ? raw.items : Array.isArray(raw.prefixItems) ? raw.prefixItems : [];
      const tupleKey = Array.isArray(raw.items) ? 'items' : 'prefixItems';
      const prefix = tuple.map((item: unknown, i: number) => sub(item, `${tupleKey}/${i}`));
      const rest = Array.isArray(raw.items) ? raw.additionalItems : raw.items;
      const items = rest === undefined ? ANY : sub(rest, Array.isArray(raw.items) ? 'additionalItems' : 'items');
      return {
        kind: 'array',
        prefix,
        items: items.kind === 'never' ? false : items,
        minItems: least(raw, 'minItems', pointer) ?? 0,
        maxItems: count(raw.maxItems),
        unique: raw.uniqueItems === true,
      };
    }
    default:
      throw new UnsupportedSchemaError(`${pointer}/type`, `unknown type ${JSON.stringify(type)?.slice(0, 40)}`);
  }
}

/** a pattern that is no regular expression makes the schema invalid (parsing is linear: nothing is matched) */
function checkPattern(pattern: string, pointer: string): void {
  try {
    parsePattern(pattern);
  } catch (error) {
    throw new UnsupportedSchemaError(pointer, `not a valid regular expression (${error instanceof Error ? error.message.slice(0, 200) : 'unreadable'})`);
  }
}

const escapePointer = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

function union(options: Shape[]): Shape {
  const flat = options.flatMap((option) => (option.kind === 'union' ? option.options : [option])).filter((option) => option.kind !== 'never');
  if (flat.length === 0) return NEVER;
  if (flat.some((option) => option.kind === 'any')) return ANY;
  return flat.length === 1 ? flat[0]! : { kind: 'union', options: flat.slice(0, MAX_BRANCHES) };
}

const lower = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
const upper = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** What fits both shapes (allOf), as far as shapes can say; the rest is left to the final check. */
/** What merging needs: the shape a reference stands for, and a tick per merge (counted as a subschema read). */
interface Merging {
  resolved: (shape: Shape) => Shape;
  tick: () => void;
}

export function intersect(a: Shape, b: Shape, merging: Merging): Shape {
  merging.tick();
  const resolved = merging.resolved;
  if (a.kind === 'any') return b;
  if (b.kind === 'any') return a;
  if (a.kind === 'never' || b.kind === 'never') return NEVER;
  if (a.kind === 'ref') return intersect(resolved(a), b, merging);
  if (b.kind === 'ref') return intersect(a, resolved(b), merging);
  if (a.kind === 'union') return union(a.options.map((option) => intersect(option, b, merging)));
  if (b.kind === 'union') return union(b.options.map((option) => intersect(a, option, merging)));
  if (a.kind === 'literals' || b.kind === 'literals') {
    const [values, other] = a.kind === 'literals' ? [a.values, b] : [(b as { values: Literal[] }).values, a];
    const kept = values.filter((value) => literalMayFit(value, other));
    return kept.length === 0 ? NEVER : { kind: 'literals', values: kept };
  }
  if (a.kind === 'number' && b.kind === 'number') {
    return {
      kind: 'number',
      integer: a.integer || b.integer,
      minimum: lower(a.minimum, b.minimum),
      maximum: upper(a.maximum, b.maximum),
      exclusiveMinimum: lower(a.exclusiveMinimum, b.exclusiveMinimum),
      exclusiveMaximum: upper(a.exclusiveMaximum, b.exclusiveMaximum),
      multipleOf: a.multipleOf ?? b.multipleOf,
    };
  }
  if (a.kind === 'string' && b.kind === 'string') {
    return {
      kind: 'string',
      minLength: Math.max(a.minLength, b.minLength),
      maxLength: upper(a.maxLength, b.maxLength),
      format: a.format ?? b.format,
      patterns: [...a.patterns, ...b.patterns],
    };
  }
  if (a.kind === 'object' && b.kind === 'object') {
    const properties = new Map(a.properties);
    for (const [name, shape] of b.properties) {
      const mine = properties.get(name);
      properties.set(name, mine ? intersect(mine, shape, merging) : shape);
    }
    return {
      kind: 'object',
      properties,
      required: new Set([...a.required, ...b.required]),
      additional: a.additional === false || b.additional === false ? false : intersect(a.additional, b.additional, merging),
      minProperties: Math.max(a.minProperties, b.minProperties),
      maxProperties: upper(a.maxProperties, b.maxProperties),
    };
  }
  if (a.kind === 'array' && b.kind === 'array') {
    const length = Math.max(a.prefix.length, b.prefix.length);
    const at = (shape: typeof a, i: number): Shape => shape.prefix[i] ?? (shape.items === false ? NEVER : shape.items);
    return {
      kind: 'array',
      prefix: Array.from({ length }, (_, i) => intersect(at(a, i), at(b, i), merging)),
      items: a.items === false || b.items === false ? false : intersect(a.items, b.items, merging),
      minItems: Math.max(a.minItems, b.minItems),
      maxItems: upper(a.maxItems, b.maxItems),
      unique: a.unique || b.unique,
    };
  }
  return a.kind === b.kind ? a : NEVER;
}

const texts = new WeakMap<Shape, Set<string>>();
/** a literal shape's values as JSON texts, for merging two enums in linear time */
function literalTexts(shape: Extract<Shape, { kind: 'literals' }>): Set<string> {
  let set = texts.get(shape);
  if (!set) texts.set(shape, (set = new Set(shape.values.map((value) => JSON.stringify(value)))));
  return set;
}

/** whether a literal is of a kind the shape allows (its finer bounds are left to the final check) */
function literalMayFit(value: Literal, shape: Shape): boolean {
  switch (shape.kind) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && (!shape.integer || Number.isInteger(value));
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'literals':
      return literalTexts(shape).has(JSON.stringify(value));
    default:
      return true;
  }
}
