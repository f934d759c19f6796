// GET /api/v1/ai/models: the catalog as clients need it, prices in atomic units and in USDC.
import type { ModelConfig } from '../config/schema.ts';
import type { ModelCatalog } from '../providers/catalog.ts';

function limits(model: ModelConfig): Record<string, unknown> {
  switch (model.capability) {
    case 'chat':
      return { maxTokens: model.maxTokens, defaultMaxTokens: model.defaultMaxTokens };
    case 'image':
      return { sizes: model.sizes, defaultSize: model.defaultSize, maxN: model.maxN };
    case 'speech':
      return {
        voices: model.voices,
        defaultVoice: model.defaultVoice,
        formats: model.formats,
        defaultFormat: model.defaultFormat,
        maxTextLength: model.maxTextLength,
      };
  }
}

export function modelsListing(catalog: ModelCatalog): Record<string, unknown> {
  return {
    currency: { asset: 'USDC', decimals: 6, note: 'prices are integer strings in atomic units: "1000" = 0.001 USDC' },
    models: catalog.models.map((model) => ({
      id: model.id,
      capability: model.capability,
      label: model.label,
      provider: model.provider,
      ...limits(model),
      allowedOptions: model.allowedOptions,
      price: model.price,
    })),
  };
}
