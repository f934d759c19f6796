// The model catalog: maps a public model id to its config (provider, limits, price).
import { ApiError } from '../errors.ts';
import type { Capability, ModelConfig } from '../config/schema.ts';

type ModelOf<C extends Capability> = Extract<ModelConfig, { capability: C }>;

export class ModelCatalog {
  readonly models: readonly ModelConfig[];
  private readonly defaults: Partial<Record<Capability, string>>;

  constructor(models: readonly ModelConfig[], defaults: Partial<Record<Capability, string>> = {}) {
    this.models = models;
    this.defaults = defaults;
  }

  /** The model a request names, or the capability's default; a 400 naming the model otherwise. */
  resolve<C extends Capability>(capability: C, id: string | undefined): ModelOf<C> {
    const wanted = id ?? this.defaults[capability] ?? this.models.find((m) => m.capability === capability)?.id;
    const model = this.models.find((m) => m.id === wanted);
    if (!model || model.capability !== capability) {
      const known = this.models.filter((m) => m.capability === capability).map((m) => m.id);
      throw new ApiError(400, 'unknown_model', `unknown ${capability} model "${wanted}"; available: ${known.join(', ')}`, {
        field: 'model',
      });
    }
    return model as ModelOf<C>;
  }

  byId(id: string): ModelConfig | undefined {
    return this.models.find((m) => m.id === id);
  }
}
