// GET /v1/models (free) as Anthropic's Models API answers it, for a client that sends `anthropic-version` (the
// Anthropic SDK's models.list and models.retrieve): the chat models, those /v1/messages serves, in the catalog's
// order, paged by limit / after_id / before_id as Anthropic pages. What the catalog does not say is null, never
// guessed: capabilities (OpenAI's list has `supports` for them), the input window, dates of retirement. The
// display name is the id (a catalog label is a description, too long for a name).
import { ApiError } from '../../errors.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';

export interface AnthropicModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
  capabilities: null;
  deprecated_at: null;
  lifecycle: 'active';
  line: null;
  max_input_tokens: null;
  max_tokens: number;
  retires_at: null;
}

export interface AnthropicModelPage {
  data: AnthropicModelInfo[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** What Anthropic's list takes from the query. */
export interface AnthropicPageQuery {
  limit?: string | undefined;
  after_id?: string | undefined;
  before_id?: string | undefined;
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** The catalog's chat models as Anthropic describes models; `createdAt` an RFC 3339 time (the service's start). */
export function anthropicModels(catalog: ModelCatalog, createdAt: string): AnthropicModelInfo[] {
  return catalog.models.flatMap((model) =>
    model.capability === 'chat'
      ? [
          {
            type: 'model' as const,
            id: model.id,
            display_name: model.id,
            created_at: createdAt,
            capabilities: null,
            deprecated_at: null,
            lifecycle: 'active' as const,
            line: null,
            max_input_tokens: null,
            max_tokens: model.maxTokens,
            retires_at: null,
          },
        ]
      : [],
  );
}

/** One page: the `limit` models after `after_id`, or the `limit` before `before_id`, or the first `limit`. */
export function anthropicModelPage(models: readonly AnthropicModelInfo[], query: AnthropicPageQuery): AnthropicModelPage {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ApiError(400, 'invalid_request', `limit: an integer from 1 to ${MAX_LIMIT}`, { field: 'limit' });
  }
  const at = (field: 'after_id' | 'before_id') => {
    const index = models.findIndex((model) => model.id === query[field]);
    if (index === -1) throw new ApiError(400, 'invalid_request', `${field}: no model ${JSON.stringify(query[field])}`, { field });
    return index;
  };
  let start = 0;
  let end = models.length;
  if (query.before_id !== undefined) {
    end = at('before_id');
    start = Math.max(0, end - limit);
  } else {
    if (query.after_id !== undefined) start = at('after_id') + 1;
    end = Math.min(models.length, start + limit);
  }
  const data = models.slice(start, end);
  return {
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: query.before_id !== undefined ? start > 0 : end < models.length,
  };
}
