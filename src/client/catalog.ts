// The gateway's catalog, as GET /api/v1/ai/models lists it: what `x402-ai models` prints, and where `chat` and
// `x402-ai proxy` find a chat model when none is named.

/** A model as GET /api/v1/ai/models lists it (the fields `models` prints). */
export interface ListedModel {
  id: string;
  capability: string;
  label: string;
  price: Record<string, string | Record<string, string>>;
  maxTokens?: number;
  defaultMaxTokens?: number;
  sizes?: string[];
  maxN?: number;
  voices?: string[];
  formats?: string[];
  maxTextLength?: number;
  allowedOptions?: string[];
}

export async function readModels(baseUrl: string, fetcher: typeof fetch = fetch): Promise<{ models: ListedModel[] }> {
  return (await (await fetcher(`${baseUrl}/api/v1/ai/models`)).json()) as { models: ListedModel[] };
}

/** The first chat model the catalog lists (a live gateway may hold no embedded model). */
export const firstChatModel = (models: readonly ListedModel[]): ListedModel | undefined => models.find((model) => model.capability === 'chat');
