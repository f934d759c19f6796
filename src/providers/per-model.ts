// One object per catalog entry, created on first use. AI SDK model objects hold no per-call state, and
// building one is not free (@ai-sdk/openai-compatible builds its zod response schemas in the
// constructor: more CPU than the rest of a chat call), so each is built once and reused.
import type { ModelConfig } from '../config/schema.ts';

export function perModel<M extends ModelConfig, T>(create: (model: M) => T): (model: M) => T {
  const instances = new Map<string, T>();
  return (model) => {
    let instance = instances.get(model.id);
    if (!instance) instances.set(model.id, (instance = create(model)));
    return instance;
  };
}
