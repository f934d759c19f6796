// What the HTTP layer needs to know of an endpoint: its contract, and how to turn a body into a
// priced call whose work can run once payment is verified.
import type { z } from 'zod';
import { ApiError } from '../errors.ts';
import { parseOrThrow } from './validate.ts';
import { isNeverPassedOption, type Capability, type ModelConfig } from '../config/schema.ts';
import type { ModelCatalog } from '../providers/catalog.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { mediaExtension, type MediaStore } from '../media/media-store.ts';

export interface EndpointContext {
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  media: MediaStore;
  /** absolute URL under which a stored media id is served */
  mediaUrl: (id: string) => string;
}

export interface RunResult {
  body: unknown;
  media: string[];
  /**
   * What this result costs when metered (x402 `upto`), from the price table of the model that answered; at
   * most the quote. Absent: the quote (the endpoint is not metered).
   */
  cost?: bigint;
}

export interface PreparedCall {
  model: ModelConfig;
  /** price in atomic units (for a metered call, the most it may cost) */
  amount: bigint;
  run: () => Promise<RunResult>;
}

export interface Endpoint {
  path: string;
  capability: Capability;
  /** names the operation in 402 bodies and the OpenAPI document */
  description: string;
  summary: string;
  requestSchema: z.ZodType;
  responseSchema: z.ZodType;
  prepare: (body: unknown, context: EndpointContext) => PreparedCall;
  /**
   * An example call for catalogues (the x402 bazaar extension): a valid body naming this model, and a 200 body of
   * the response's shape, its media URLs under `origin`.
   */
  example?: (model: ModelConfig, origin: string) => EndpointExample;
}

export interface EndpointExample {
  request: Record<string, unknown>;
  response: Record<string, unknown>;
}

/** What a media URL of an example looks like (ids are 128-bit random, base64url, then the type's extension). */
export const exampleMediaUrl = (origin: string, contentType: string) => `${origin}/media/3q2-7wAAAAAAAAAAAAAAAA.${mediaExtension(contentType)}`;

/**
 * Keeps only the options the model allows, of the types its engine reads (when it declares them); anything
 * else is a 400 naming the key.
 */
export function allowedOptions(
  model: ModelConfig,
  options: Record<string, string | number | boolean> | undefined,
  schema: z.ZodType | undefined,
): Record<string, string | number | boolean> {
  if (!options) return {};
  for (const key of Object.keys(options)) {
    if (isNeverPassedOption(key) || !model.allowedOptions.includes(key)) {
      const allowed = model.allowedOptions.length > 0 ? model.allowedOptions.join(', ') : 'none';
      throw new ApiError(400, 'invalid_request', `options.${key} is not accepted by model ${model.id} (allowed: ${allowed})`, {
        field: `options.${key}`,
      });
    }
  }
  if (schema) parseOrThrow(schema, options, 'options');
  return options;
}
