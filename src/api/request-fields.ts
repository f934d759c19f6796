// What every surface does with the fields of a request it translates, in the client's own words: field paths
// in the surface's syntax, the top-level fields it refuses or ignores (refuseFields), and the spec's field names
// renamed to the surface's in a refusal (withFieldNames).
import { ApiError } from '../errors.ts';
import type { RequestNotes } from './request-notes.ts';

/**
 * How a surface writes a field path: Anthropic's `messages.0.content.1` (dots), OpenAI's
 * `messages[0].content[1]` (brackets).
 */
export type PathStyle = 'dots' | 'brackets';

export function fieldPath(path: readonly PropertyKey[], style: PathStyle): string {
  let text = '';
  for (const key of path) {
    const index = typeof key === 'number' || (typeof key === 'string' && /^\d+$/.test(key));
    if (style === 'brackets' && index) text += `[${String(key)}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

/** What a surface does with top-level fields its schema does not take. */
export interface FieldRules {
  /** fields it cannot honour, each with why (and details of the 400 a client's SDK reads): a 400 naming the field, before any price */
  refused: Readonly<Record<string, string | { why: string; details: Record<string, unknown> }>>;
  /** fields whose every value changes nothing the client relies on here: accepted, left out and reported */
  ignored: readonly string[];
}

/**
 * The body without its refused and ignored top-level fields (a shallow copy; the client's body is kept as sent,
 * for its request hash). A refused field sent empty (null, false, []) asks for nothing and is dropped; sent with a
 * value it is a 400 naming it. An ignored field is dropped and noted. A body that is not an object is returned
 * as it is, for the schema to refuse.
 */
export function refuseFields(body: unknown, rules: FieldRules, notes: RequestNotes): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  let rest: Record<string, unknown> | undefined;
  const drop = (field: string) => {
    rest ??= { ...(body as Record<string, unknown>) };
    delete rest[field];
  };
  for (const field of rules.ignored) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (!isEmpty(value)) notes.ignore(field);
    drop(field);
  }
  for (const [field, rule] of Object.entries(rules.refused)) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (!isEmpty(value)) {
      const { why, details } = typeof rule === 'string' ? { why: rule, details: undefined } : rule;
      throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field, ...(details ? { details } : {}) });
    }
    drop(field);
  }
  return rest ?? body;
}

/** a value that asks for nothing: null, false, 0 (top_logprobs: 0), an empty array or object */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === false || value === 0) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Runs `prepare`, renaming the field of the 400 it throws: the spec's names (text, format, options.speed,
 * max_tokens, prompt) become the surface's (input, response_format, speed, max_output_tokens, messages).
 */
export function withFieldNames<T>(names: Record<string, string>, prepare: () => T): T {
  try {
    return prepare();
  } catch (error) {
    const renamed = error instanceof ApiError && error.field ? names[error.field] : undefined;
    if (!renamed || !(error instanceof ApiError)) throw error;
    const message = error.message.startsWith(error.field!) ? `${renamed}${error.message.slice(error.field!.length)}` : error.message;
    throw new ApiError(error.status, error.code, message, { field: renamed, headers: error.headers, cause: error.cause });
  }
}
