// What the HTTP layer needs to know of an endpoint: its contract, and how to turn a body into a
// priced call whose work can run once payment is verified.
import type { z } from 'zod';
import { ApiError } from '../errors.ts';
import { parseOrThrow } from './validate.ts';
import { isNeverPassedOption, type Capability, type ModelConfig } from '../config/schema.ts';
import type { ModelCatalog } from '../providers/catalog.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { mediaExtension, type MediaStore } from '../media/media-store.ts';
import type { TokenUsage } from '../pricing/token-usage.ts';
import type { RequestNotes } from './request-notes.ts';

export interface EndpointContext {
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  media: MediaStore;
  /** absolute URL under which a stored media id is served */
  mediaUrl: (id: string) => string;
}

export interface WorkOutput {
  /** the 200 body, kept with the payment (replays, GET /api/v1/payments/:id) */
  body: unknown;
  /** media ids the body refers to */
  media: string[];
  /** tokens used, for chat: usage headers now, metered settlement later */
  usage?: TokenUsage | undefined;
  /**
   * What this result costs when metered (x402 `upto`), from the price table of the model that answered; at
   * most the quote. Absent: the quote (the endpoint is not metered).
   */
  cost?: bigint | undefined;
  /** why the model stopped (chat: 'stop', 'length', ...), for the call's trace */
  finishReason?: string | undefined;
}

export interface PreparedCall {
  model: ModelConfig;
  /** price in atomic units (for a metered call, the most it may cost) */
  amount: bigint;
  run: () => Promise<WorkOutput>;
  /**
   * the one payer who may pay for it: a call that goes on from what an earlier paid call left (a Responses
   * previous_response_id or item_reference) is that call's payer's alone
   */
  payer?: string | undefined;
  /** told who pays, once the payment verified and before `run` or the events' run (a Responses answer is kept as theirs) */
  paidBy?: ((payer: string) => void) | undefined;
  /** present when the client asked for the answer as server-sent events */
  events?: EventStream | undefined;
  /** what the call accepted and ignored, or lowered, said on every answer to it (request-notes.ts) */
  notes?: RequestNotes | undefined;
}

/** What a settled payment's stream carries at its end (the X-PAYMENT-RESPONSE facts, and what was charged). */
export interface StreamReceipt {
  success: true;
  transaction: string;
  network: string;
  payer: string;
  /** atomic units: the charge, or where the scheme says otherwise its own amount (batch-settlement: a deposit's, '' for a charge alone) */
  amount: string;
  /** the scheme's own fields (batch-settlement: chargedAmount, channelState), as PAYMENT-RESPONSE has them */
  extra?: Record<string, unknown>;
}

/** Why a stream ended without a result: an upstream or settlement failure, or a payment still settling. */
export interface StreamFailure {
  status: number;
  code: string;
  message: string;
}

/** A call answered as server-sent events, in the format of the surface it came through. */
export interface EventStream {
  /**
   * Runs the work, writing events as the model produces them; resolves with the whole result, kept for replay.
   * `write` returns a promise while the client's unread bytes are over the bound: the next piece is read from the
   * model once it resolves (backpressure).
   */
  run(write: (events: string) => Promise<void> | undefined, signal: AbortSignal): Promise<WorkOutput>;
  /** the closing events of a paid result, carrying its receipt; `replayed`: the result was kept, send it whole */
  end(body: unknown, receipt: StreamReceipt, replayed: boolean): string;
  /** the event that tells the client why the stream stops short */
  failure(failure: StreamFailure): string;
}

/** One server-sent event holding a JSON value (JSON.stringify never writes a line break). */
export function sseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';

export interface Endpoint {
  path: string;
  capability: Capability;
  /** names the operation in 402 bodies and the OpenAPI document */
  description: string;
  summary: string;
  requestSchema: z.ZodType;
  responseSchema: z.ZodType;
  /** priced at a ceiling and charged the result's cost (x402 `upto`) where a rail offers it */
  metered?: boolean;
  prepare: (body: unknown, context: EndpointContext) => PreparedCall;
  /**
   * An example call for catalogues (the x402 bazaar extension): a valid body naming this model, and a 200 body of
   * the response's shape, its media URLs under `origin`.
   */
  example?: (model: ModelConfig, origin: string) => EndpointExample;
  /** the tokens a kept 200 body reports (chat), for the usage headers of a replayed result */
  usageOf?: (body: unknown) => Partial<TokenUsage> | undefined;
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
