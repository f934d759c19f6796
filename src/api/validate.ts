// Request checks that end in the service's one error type, naming the field at fault.
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { fieldPath, refuseFields, type FieldRules, type PathStyle } from './request-fields.ts';
import type { RequestNotes } from './request-notes.ts';

/** `at` names where the value sits in the body (e.g. "options"), so the field named is the whole path. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, at?: string, style: PathStyle = 'dots'): z.infer<S> {
  const result = compiled(schema).safeParse(value);
  if (result.success) return result.data;
  throw refusal(result.error.issues[0]!, value, style, at);
}

const compiledSchemas = new WeakMap<z.ZodType, z.ZodType>();

/**
 * The schema with zod's compiled fast path (z.compile): a valid body is checked by one generated function instead of
 * a walk through every field's parser, which cost ~12 us of a chat call against ~2 (bench/upstream-overhead.ts). An
 * invalid one falls back to the schema's own parser: the same issues, the same 400. Generating it takes 5-70 ms for a
 * surface's schema (Responses' the most), which no request should wait for: the first use of a schema is checked by
 * the schema itself, and its compiled form is made right after.
 */
function compiled<S extends z.ZodType>(schema: S): S {
  const fast = compiledSchemas.get(schema);
  if (fast) return fast as S;
  compiledSchemas.set(schema, schema);
  setImmediate(() => compiledSchemas.set(schema, z.compile(schema)));
  return schema;
}

/** how many times a body is pruned of ignored keys and checked again (each pass finds every such key it can) */
const MAX_PASSES = 4;

/**
 * A request body of an agent surface, checked as its client states it. Top-level fields go by `rules` (refused:
 * a 400; ignored: dropped and noted) and the schema (an unknown one is a 400 naming it). A key the schema does not
 * know inside the body (an extra key of a content part, a message, a tool: `annotations` on a text part, `name`
 * on a tool message) changes nothing the model is asked and is dropped and noted. An unknown block or item type
 * is a 400 naming the type. Field paths are in the surface's syntax.
 */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown, { style, notes, rules }: { style: PathStyle; notes: RequestNotes; rules: FieldRules }): z.infer<S> {
  let value = refuseFields(body, rules, notes);
  for (let pass = 1; ; pass++) {
    const result = compiled(schema).safeParse(value);
    if (result.success) return result.data;
    const { issues } = result.error;
    const blocking = issues.find((issue) => issue.code !== 'unrecognized_keys' || issue.path.length === 0);
    if (blocking || pass === MAX_PASSES) throw refusal(blocking ?? issues[0]!, value, style);
    const extra = issues.flatMap((issue) => (issue as z.core.$ZodIssueUnrecognizedKeys).keys.map((key) => [...issue.path, key]));
    for (const path of extra) notes.ignore(fieldPath(path, style));
    value = withoutPaths(value, extra);
  }
}

/** The 400 of one issue, naming its field in `style`: an unknown key by its name, an unknown type by its value. */
function refusal(found: z.core.$ZodIssue, value: unknown, style: PathStyle, at?: string): ApiError {
  const issue = closestBranch(found);
  const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const path = [...(at ? [at] : []), ...issue.path, ...unknownKeys.slice(0, 1)];
  const field = fieldPath(path, style) || undefined;
  let message = unknownKeys.length > 0 ? `unknown field ${unknownKeys.join(', ')}` : issue.message;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && 'options' in issue) {
    const given = valueAt(value, issue.path);
    const options = (issue.options as unknown[]).map(String).join(', ');
    message = given === undefined ? `required (one of ${options})` : `unknown type ${JSON.stringify(given)} (this gateway takes ${options})`;
  }
  return new ApiError(400, 'invalid_request', field ? `${field}: ${message}` : message, { field });
}

/**
 * A value none of a union's shapes takes is named by the shape it came closest to (the fewest issues): its first
 * issue, at its full path, says what to change.
 */
function closestBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || 'discriminator' in issue || issue.errors.length === 0) return issue;
  // a shape the value's type does not even match (a string where an array came) is the farthest
  const distance = (branch: readonly z.core.$ZodIssue[]) => (branch[0]?.code === 'invalid_type' && branch[0].path.length === 0 ? Number.MAX_SAFE_INTEGER : branch.length);
  const closest = issue.errors.reduce((best, branch) => (distance(branch) < distance(best) ? branch : best));
  const first = closest[0];
  return first ? closestBranch({ ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue) : issue;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** `root` without the keys at `paths`, copying only the objects and arrays on the way to them. */
function withoutPaths(root: unknown, paths: readonly (readonly PropertyKey[])[]): unknown {
  const copies = new WeakSet<object>();
  const copy = <T extends object>(value: T): T => {
    const copied = (Array.isArray(value) ? [...value] : { ...value }) as T;
    copies.add(copied);
    return copied;
  };
  const top = copy(root as object);
  for (const path of paths) {
    let parent: Record<PropertyKey, unknown> | undefined = top as Record<PropertyKey, unknown>;
    for (const key of path.slice(0, -1)) {
      const child: unknown = parent[key];
      if (typeof child !== 'object' || child === null) {
        parent = undefined;
        break;
      }
      parent = (parent[key] = copies.has(child) ? child : copy(child)) as Record<PropertyKey, unknown>;
    }
    if (parent) delete parent[path.at(-1)!];
  }
  return top;
}

/** A value the model must offer (a size, a voice, a format): returned as such, or a 400 listing what it offers. */
export function offeredOrThrow<T extends string>(field: string, value: string, offered: readonly T[], modelId: string): T {
  if ((offered as readonly string[]).includes(value)) return value as T;
  throw new ApiError(400, 'invalid_request', `${field}: ${value} is not offered by model ${modelId} (${field}s: ${offered.join(', ')})`, {
    field,
  });
}
