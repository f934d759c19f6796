// GET /api/v1/ai/models: the catalog as clients need it, prices in atomic units and in USDC.
import type { ModelConfig } from '../../config/schema.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import type { ProviderRegistry } from '../../providers/registry.ts';
import { jsonSchema } from './openapi-schema.ts';
import { priceInUsdc, priceText } from '../../pricing/price-text.ts';

function limits(model: ModelConfig): Record<string, unknown> {
  switch (model.capability) {
    case 'chat':
      return {
        maxTokens: model.maxTokens,
        defaultMaxTokens: model.defaultMaxTokens,
        ...(model.maxInputChars !== undefined ? { maxInputChars: model.maxInputChars } : {}),
        // what it honours beyond text (docs/agent-chat.md), and how images and cache reads are priced
        supports: model.supports,
        imageInputChars: model.imageInputChars,
        cachedInputPercent: model.cachedInputPercent,
      };
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

/** Each allowed option with its JSON Schema where the model's engine declares one (types and ranges). */
function options(model: ModelConfig, providers: ProviderRegistry): Record<string, unknown> {
  const schema = providers.optionsSchema(model);
  if (!schema) return {};
  const properties = (jsonSchema(schema).properties ?? {}) as Record<string, unknown>;
  return { optionTypes: Object.fromEntries(model.allowedOptions.flatMap((key) => (properties[key] ? [[key, properties[key]]] : []))) };
}

export function modelsListing(catalog: ModelCatalog, providers: ProviderRegistry): Record<string, unknown> {
  return {
    currency: {
      asset: 'USDC',
      decimals: 6,
      note: 'price: integer strings in atomic units ("1000" = 0.001 USDC), what 402 requirements carry; priceUsdc: the same in decimal USDC',
    },
    models: catalog.models.map((model) => ({
      id: model.id,
      capability: model.capability,
      label: model.label,
      provider: model.provider,
      ...limits(model),
      allowedOptions: model.allowedOptions,
      ...options(model, providers),
      price: model.price,
      priceUsdc: priceInUsdc(model.price),
      priceText: priceText(model),
    })),
  };
}
