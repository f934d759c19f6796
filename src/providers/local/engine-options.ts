// What a request may set on an embedded engine through `options` (only keys its catalog entry allows),
// typed: the API refuses a wrong type or range with a 400 naming the key before any price is quoted, and
// the engine reads the very same shape from its providerOptions.
import type { z } from 'zod';
import type { EngineOptionsSchema } from '../../config/engines.ts';

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
