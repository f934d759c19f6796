// Checks an answer against the client's JSON Schema before it leaves the embedded engine, independently of the
// grammar it was decoded under (schema-shape.ts, shape-grammar.ts): a grammar bug never hands out a wrong shape,
// and what the grammar left free (not, if/then/else, contains, a pattern no grammar states...) is checked here.
// An interpreter, not a compiler: Ajv compiles a schema into code, which took ~0.6 s for an object of 500
// properties and failed (stack overflow) at 4,000 on this machine, so a client's schema could stall the gateway.
// Here nothing is prepared: the time is bounded by the answer's size times the schema's (results are kept per
// value and subschema, so choices nested in choices are not tried again and again). Patterns run on RE2
// (linear-regexp.ts); a pattern RE2 cannot run is not checked, and formats are not checked (as Ajv's default).
// Keywords of drafts 4 to 2020-12; $dynamicRef, $recursiveRef and unevaluated* are not checked.
import { linearRegExp } from './linear-regexp.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = boolean | Record<string, unknown>;

/** how deep a check may go (schema and value together): beyond, the value fails */
const MAX_DEPTH = 256;

/** Whether `value` fits `schema` (a JSON Schema; `root` resolves its local $refs). */
export function fitsSchema(schema: object, value: unknown): boolean {
  return new Checker(schema).check(schema as Schema, value as Json, [], 0);
}

class Checker {
  private readonly root: object;
  /** results per value (an object or array, or a scalar by its JSON text) and subschema */
  private readonly kept = new WeakMap<object, Map<Schema, boolean>>();
  private readonly keptScalars = new Map<string, Map<Schema, boolean>>();

  constructor(root: object) {
    this.root = root;
  }

  /** `followed`: the references taken since the last step into the value (a cycle among them would never end) */
  check(schema: Schema, value: Json, followed: string[], depth: number): boolean {
    if (schema === true) return true;
    if (schema === false || depth > MAX_DEPTH || schema === null || typeof schema !== 'object') return false;
    let results: Map<Schema, boolean> | undefined;
    if (value !== null && typeof value === 'object') {
      results = this.kept.get(value);
      if (!results) this.kept.set(value, (results = new Map()));
    } else {
      const text = JSON.stringify(value);
      results = this.keptScalars.get(text);
      if (!results) this.keptScalars.set(text, (results = new Map()));
    }
    const known = results.get(schema);
    if (known !== undefined) return known;
    const result = this.keywords(schema, value, followed, depth);
    results.set(schema, result);
    return result;
  }

  private keywords(s: Record<string, unknown>, value: Json, followed: string[], depth: number): boolean {
    const here = (sub: unknown) => this.check(sub as Schema, value, followed, depth + 1);
    const into = (sub: unknown, child: Json) => this.check(sub as Schema, child, [], depth + 1);
    if (typeof s.$ref === 'string' && s.$ref.startsWith('#')) {
      if (followed.includes(s.$ref)) return false;
      const target = this.resolve(s.$ref);
      if (target !== undefined && !this.check(target, value, [...followed, s.$ref], depth + 1)) return false;
    }
    if (s.type !== undefined && !(Array.isArray(s.type) ? s.type : [s.type]).some((type) => isType(value, type))) return false;
    if ('const' in s && !equal(s.const as Json, value)) return false;
    if (Array.isArray(s.enum) && !s.enum.some((option) => equal(option as Json, value))) return false;
    if (Array.isArray(s.allOf) && !s.allOf.every(here)) return false;
    if (Array.isArray(s.anyOf) && !s.anyOf.some(here)) return false;
    if (Array.isArray(s.oneOf) && s.oneOf.filter(here).length !== 1) return false;
    if (s.not !== undefined && here(s.not)) return false;
    if (s.if !== undefined) {
      const branch = here(s.if) ? s.then : s.else;
      if (branch !== undefined && !here(branch)) return false;
    }
    if (typeof value === 'number') return numberFits(s, value);
    if (typeof value === 'string') return stringFits(s, value);
    if (Array.isArray(value)) return this.arrayFits(s, value, into);
    if (value !== null && typeof value === 'object') return this.objectFits(s, value, into);
    return true;
  }

  private arrayFits(s: Record<string, unknown>, value: Json[], into: (sub: unknown, child: Json) => boolean): boolean {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return false;
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return false;
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    for (const [i, item] of value.entries()) {
      const sub = i < prefix.length ? prefix[i] : rest;
      if (sub !== undefined && !into(sub, item)) return false;
    }
    if (s.uniqueItems === true && value.some((item, i) => value.slice(0, i).some((other) => equal(other, item)))) return false;
    if (s.contains !== undefined) {
      const matches = value.filter((item) => into(s.contains, item)).length;
      if (matches < (typeof s.minContains === 'number' ? s.minContains : 1)) return false;
      if (typeof s.maxContains === 'number' && matches > s.maxContains) return false;
    }
    return true;
  }

  private objectFits(s: Record<string, unknown>, value: { [key: string]: Json }, into: (sub: unknown, child: Json) => boolean): boolean {
    const keys = Object.keys(value);
    if (typeof s.minProperties === 'number' && keys.length < s.minProperties) return false;
    if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) return false;
    if (Array.isArray(s.required) && !s.required.every((name) => typeof name !== 'string' || Object.hasOwn(value, name))) return false;
    const properties = isObject(s.properties) ? s.properties : {};
    const patterns = isObject(s.patternProperties) ? Object.entries(s.patternProperties) : [];
    for (const key of keys) {
      let listed = false;
      if (Object.hasOwn(properties, key)) {
        listed = true;
        if (!into(properties[key], value[key]!)) return false;
      }
      for (const [pattern, sub] of patterns) {
        if (linearRegExp(pattern)?.test(key) ?? true) {
          listed = true;
          if (!into(sub, value[key]!)) return false;
        }
      }
      if (!listed && s.additionalProperties !== undefined && !into(s.additionalProperties, value[key]!)) return false;
      if (s.propertyNames !== undefined && !into(s.propertyNames, key)) return false;
    }
    const dependent = { ...(isObject(s.dependencies) ? s.dependencies : {}), ...(isObject(s.dependentRequired) ? s.dependentRequired : {}), ...(isObject(s.dependentSchemas) ? s.dependentSchemas : {}) };
    for (const [key, needs] of Object.entries(dependent)) {
      if (!Object.hasOwn(value, key)) continue;
      if (Array.isArray(needs) ? !needs.every((name) => Object.hasOwn(value, name as string)) : !into(needs, value)) return false;
    }
    return true;
  }

  private resolve(ref: string): Schema | undefined {
    let node: unknown = this.root;
    for (const part of decodeURIComponent(ref.slice(1)).split('/').slice(1)) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
    }
    return typeof node === 'boolean' || isObject(node) ? node : undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isType(value: Json, type: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return false;
  }
}

function numberFits(s: Record<string, unknown>, value: number): boolean {
  const bound = (key: string) => (typeof s[key] === 'number' ? (s[key] as number) : undefined);
  const [minimum, maximum, multipleOf] = [bound('minimum'), bound('maximum'), bound('multipleOf')];
  // draft-04 said exclusiveness with booleans beside minimum and maximum
  if (minimum !== undefined && (s.exclusiveMinimum === true ? value <= minimum : value < minimum)) return false;
  if (maximum !== undefined && (s.exclusiveMaximum === true ? value >= maximum : value > maximum)) return false;
  const [exclusiveMinimum, exclusiveMaximum] = [bound('exclusiveMinimum'), bound('exclusiveMaximum')];
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) return false;
  if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) return false;
  if (multipleOf !== undefined && multipleOf > 0 && !Number.isInteger(Number((value / multipleOf).toFixed(9)))) return false;
  return true;
}

function stringFits(s: Record<string, unknown>, value: string): boolean {
  const length = typeof s.minLength === 'number' || typeof s.maxLength === 'number' ? [...value].length : 0;
  if (typeof s.minLength === 'number' && length < s.minLength) return false;
  if (typeof s.maxLength === 'number' && length > s.maxLength) return false;
  if (typeof s.pattern === 'string') {
    try {
      if (!(linearRegExp(s.pattern)?.test(value) ?? true)) return false;
    } catch {
      return false; // not a regular expression: nothing matches it
    }
  }
  return true;
}

function equal(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as Json[]).length && a.every((item, i) => equal(item, (b as Json[])[i]!));
  const keys = Object.keys(a);
  const other = b as { [key: string]: Json };
  return keys.length === Object.keys(other).length && keys.every((key) => Object.hasOwn(other, key) && equal(a[key]!, other[key]!));
}
