// GET /v1/models (free): the catalog in OpenAI's list shape, and per chat model what it supports (a field
// OpenAI does not have: SDKs ignore it). Prices and limits are in /api/v1/ai/models.
import type { ModelCatalog } from '../../providers/catalog.ts';

export function openaiModelList(catalog: ModelCatalog, created: number) {
  return {
    object: 'list' as const,
    data: catalog.models.map((model) => ({
      id: model.id,
      object: 'model' as const,
      created,
      owned_by: model.provider,
      ...(model.capability === 'chat'
        ? { supports: { tools: model.supports.tools, json_schema: model.supports.jsonSchema, vision: model.supports.vision, streaming: model.supports.streaming, reasoning: model.supports.reasoning } }
        : {}),
    })),
  };
}
