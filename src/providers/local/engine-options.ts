// What a request may set on an embedded engine through `options` (only keys its catalog entry allows),
// typed: the API refuses a wrong type or range with a 400 naming the key before any price is quoted, and
// the engine reads the very same shape from its providerOptions.
import { z } from 'zod';

export type EngineOptionsSchema = z.ZodObject;

export const seedOption = z.number().int().min(0).max(2 ** 31 - 1).describe('same seed, same request: the same output');

/** The engine's own options from a call's providerOptions; what does not fit its schema is not read. */
export function engineOptions<S extends EngineOptionsSchema>(
  schema: S,
  providerOptions: Record<string, unknown> | undefined,
  key: string,
): Partial<z.infer<S>> {
  // engines declare their schemas with every key optional (.partial())
  const parsed = schema.safeParse(providerOptions?.[key] ?? {});
  return parsed.success ? (parsed.data as Partial<z.infer<S>>) : {};
}
