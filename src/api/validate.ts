// Turns a zod failure into the service's one error type, naming the first field at fault.
import type { z } from 'zod';
import { ApiError } from '../errors.ts';

/** `at` names where the value sits in the body (e.g. "options"), so the field named is the whole path. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, at?: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const field = [...(at ? [at] : []), ...issue.path, ...unknownKeys.slice(0, 1)].map(String).join('.') || undefined;
  const message = unknownKeys.length > 0 ? `unknown field ${unknownKeys.join(', ')}` : issue.message;
  throw new ApiError(400, 'invalid_request', field ? `${field}: ${message}` : message, { field });
}
