// GET /v1/models (free): the catalog in OpenAI's list shape. Prices and limits are in /api/v1/ai/models.
import type { ModelCatalog } from '../../providers/catalog.ts';

export function openaiModelList(catalog: ModelCatalog, created: number) {
  return {
    object: 'list' as const,
    data: catalog.models.map((model) => ({ id: model.id, object: 'model' as const, created, owned_by: model.provider })),
  };
}
