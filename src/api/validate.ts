// Request checks that end in the service's one error type, naming the field at fault.
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

/** A value the model must offer (a size, a voice, a format): returned as such, or a 400 listing what it offers. */
export function offeredOrThrow<T extends string>(field: string, value: string, offered: readonly T[], modelId: string): T {
  if ((offered as readonly string[]).includes(value)) return value as T;
  throw new ApiError(400, 'invalid_request', `${field}: ${value} is not offered by model ${modelId} (${field}s: ${offered.join(', ')})`, {
    field,
  });
}
