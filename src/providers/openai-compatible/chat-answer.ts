// What an OpenAI-compatible /chat/completions answer means, in the AI SDK's words (LanguageModelV4): a whole
// answer's content, finish reason and usage, and a stream's events as stream parts. The same reading as
// @ai-sdk/openai-compatible 3.0.92's chat model, without its zod schemas: the fields used are checked by hand, and
// an answer missing one it needs is refused as the SDK refuses it (chat-model.ts turns `UnreadableAnswer` into its
// APICallError).
import type { JSONObject, LanguageModelV4Content, LanguageModelV4FinishReason, LanguageModelV4StreamPart, LanguageModelV4Usage, SharedV4ProviderMetadata } from '@ai-sdk/provider';
import { StreamingToolCallTracker, createLanguageModelResponseMetadata, createNullLanguageModelUsage, generateId } from '@ai-sdk/provider-utils';

/** An answer that is not the chat-completion shape (the SDK's schema would have refused it). */
export class UnreadableAnswer extends Error {
  override name = 'UnreadableAnswer';
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const stringOr = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const numberOr = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

function finishReasonOf(raw: string | undefined, hasRefusal: boolean): LanguageModelV4FinishReason {
  return { unified: unifiedFinishReason(raw, hasRefusal), raw };
}

function unifiedFinishReason(raw: string | undefined, hasRefusal: boolean): LanguageModelV4FinishReason['unified'] {
  switch (raw) {
    case 'stop':
      return hasRefusal ? 'content-filter' : 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    default:
      return 'other';
  }
}

function usageOf(usage: unknown): LanguageModelV4Usage {
  if (!isObject(usage)) return createNullLanguageModelUsage();
  const prompt = numberOr(usage.prompt_tokens) ?? 0;
  const completion = numberOr(usage.completion_tokens) ?? 0;
  const cacheRead = (isObject(usage.prompt_tokens_details) && numberOr(usage.prompt_tokens_details.cached_tokens)) || 0;
  const reasoning = (isObject(usage.completion_tokens_details) && numberOr(usage.completion_tokens_details.reasoning_tokens)) || 0;
  return {
    inputTokens: { total: prompt, noCache: prompt - cacheRead, cacheRead, cacheWrite: undefined },
    outputTokens: { total: completion, text: Math.max(0, completion - reasoning), reasoning },
    raw: usage as JSONObject,
  };
}

/** The prediction counts OpenAI reports, under the provider's metadata key. */
function metadataOf(usage: unknown, key: string): SharedV4ProviderMetadata {
  const fields: JSONObject = {};
  const details = isObject(usage) ? usage.completion_tokens_details : undefined;
  if (isObject(details)) {
    if (typeof details.accepted_prediction_tokens === 'number') fields.acceptedPredictionTokens = details.accepted_prediction_tokens;
    if (typeof details.rejected_prediction_tokens === 'number') fields.rejectedPredictionTokens = details.rejected_prediction_tokens;
  }
  return { [key]: fields };
}

/** Text and reasoning from a message's content: a string, or parts (text; a "thinking" part's text chunks). */
function contentParts(content: unknown): Array<{ type: 'text' | 'reasoning'; text: string }> {
  if (typeof content === 'string') return content.length > 0 ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const parts: Array<{ type: 'text' | 'reasoning'; text: string }> = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') {
      if (part.text.length > 0) parts.push({ type: 'text', text: part.text });
    } else if (part.type === 'thinking' && Array.isArray(part.thinking)) {
      const text = part.thinking.map((chunk) => (isObject(chunk) && chunk.type === 'text' && typeof chunk.text === 'string' ? chunk.text : '')).join('');
      if (text.length > 0) parts.push({ type: 'reasoning', text });
    }
  }
  return parts;
}

/** When the answer says: the id, the model and the time it gives (each undefined where it gives none). */
function responseMetadataOf(body: Json) {
  return createLanguageModelResponseMetadata({ id: stringOr(body.id), model: stringOr(body.model), created: numberOr(body.created) || undefined });
}

/** A whole (non-streamed) answer: its content in order (reasoning, text, refusal, tool calls), finish reason and usage. */
export function generatedAnswer(body: unknown, metadataKey: string) {
  if (!isObject(body) || !Array.isArray(body.choices)) throw new UnreadableAnswer('the answer is not a chat completion (no choices)');
  const choice: unknown = body.choices[0];
  if (!isObject(choice) || !isObject(choice.message)) throw new UnreadableAnswer('the answer did not contain any choices');
  const message = choice.message;
  const content: LanguageModelV4Content[] = [];
  const reasoning = stringOr(message.reasoning_content) ?? stringOr(message.reasoning);
  if (reasoning) content.push({ type: 'reasoning', text: reasoning });
  content.push(...contentParts(message.content));
  const refusal = stringOr(message.refusal);
  if (refusal) content.push({ type: 'text', text: refusal });
  if (message.tool_calls != null) {
    if (!Array.isArray(message.tool_calls)) throw new UnreadableAnswer('tool_calls is not a list');
    for (const call of message.tool_calls) {
      const fn = isObject(call) ? call.function : undefined;
      if (!isObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') throw new UnreadableAnswer('a tool call without its name and arguments');
      const signature = thoughtSignature(call);
      content.push({
        type: 'tool-call',
        toolCallId: stringOr((call as Json).id) || generateId(),
        toolName: fn.name,
        input: fn.arguments,
        ...(signature ? { providerMetadata: { [metadataKey]: { thoughtSignature: signature } } } : {}),
      });
    }
  }
  return {
    content,
    finishReason: finishReasonOf(stringOr(choice.finish_reason), Boolean(refusal)),
    usage: usageOf(body.usage),
    providerMetadata: metadataOf(body.usage, metadataKey),
    response: responseMetadataOf(body),
  };
}

/** Gemini's thought signature on a tool call (extra_content.google.thought_signature), handed back next turn. */
function thoughtSignature(call: unknown): string | undefined {
  const extra = isObject(call) ? call.extra_content : undefined;
  const google = isObject(extra) ? extra.google : undefined;
  return isObject(google) ? stringOr(google.thought_signature) : undefined;
}

interface ToolCallDelta {
  index?: number;
  id?: string | null;
  function?: { name?: string; arguments?: string };
  extra_content?: unknown;
}

/**
 * A stream's events read one at a time (`event`, each the JSON of a `data:` line; `[DONE]` left out), the parts
 * they make handed to `emit`; `end` once the stream is over. Tool calls are assembled by the SDK's own
 * StreamingToolCallTracker (calls split over events, by index or id), fed as the SDK feeds it: a call's
 * argument fragments are held until its name arrives.
 */
export class ChatStreamReader {
  #finishReason: LanguageModelV4FinishReason | undefined;
  #rawFinishReason: string | undefined;
  #usage: unknown;
  #metadataSent = false;
  #reasoning = false;
  #text = false;
  #refused = false;
  readonly #pending = new Map<number, { id: string | null; args: string; extra: unknown }>();
  readonly #forwarded = new Set<number>();
  readonly #tracker: StreamingToolCallTracker;
  readonly #emit: (part: LanguageModelV4StreamPart) => void;
  readonly #metadataKey: string;

  constructor(emit: (part: LanguageModelV4StreamPart) => void, metadataKey: string) {
    this.#emit = emit;
    this.#metadataKey = metadataKey;
    this.#tracker = new StreamingToolCallTracker(
      { enqueue: emit },
      {
        generateId,
        extractMetadata: (delta) => {
          const signature = thoughtSignature(delta);
          return signature ? { [metadataKey]: { thoughtSignature: signature } } : undefined;
        },
        buildToolCallProviderMetadata: (metadata) => metadata,
      },
    );
  }

  /** One event's data; a line that is not JSON, or not an object, is an error part (as the SDK makes it). */
  event(data: string): void {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch (error) {
      return this.#fail(new UnreadableAnswer(`an event of the stream is not JSON: ${(error as Error).message}`));
    }
    if (!isObject(value)) return this.#fail(new UnreadableAnswer('an event of the stream is not a JSON object'));
    if ('error' in value) return this.#fail(value.error);
    if (!this.#metadataSent) {
      const metadata = responseMetadataOf(value);
      if (Object.values(metadata).some(Boolean)) {
        this.#metadataSent = true;
        this.#emit({ type: 'response-metadata', ...metadata });
      }
    }
    if (value.usage != null) this.#usage = value.usage;
    const choice: unknown = Array.isArray(value.choices) ? value.choices[0] : undefined;
    if (!isObject(choice)) return;
    const finish = stringOr(choice.finish_reason);
    if (finish !== undefined) this.#rawFinishReason = finish;
    const delta = choice.delta;
    if (!isObject(delta)) return;
    const reasoning = stringOr(delta.reasoning_content) ?? stringOr(delta.reasoning);
    if (reasoning) this.#reasoningDelta(reasoning);
    for (const part of contentParts(delta.content)) {
      if (part.type === 'reasoning') this.#reasoningDelta(part.text);
      else this.#textDelta(part.text);
    }
    const refusal = stringOr(delta.refusal);
    if (refusal) {
      this.#refused = true;
      this.#textDelta(refusal);
    }
    if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) {
      this.#closeReasoning();
      for (const call of delta.tool_calls) if (isObject(call)) this.#toolCallDelta(call as ToolCallDelta);
    }
  }

  /** The stream is over: open parts are closed, held calls finished, and the finish part says why it stopped. */
  end(): void {
    this.#closeReasoning();
    if (this.#text) this.#emit({ type: 'text-end', id: 'txt-0' });
    this.#text = false;
    for (const [index, pending] of this.#pending) this.#tracker.processDelta({ index, id: pending.id, function: { arguments: pending.args } });
    this.#pending.clear();
    this.#tracker.flush();
    if (this.#rawFinishReason !== undefined) this.#finishReason = finishReasonOf(this.#rawFinishReason, this.#refused);
    if (!this.#finishReason) {
      this.#finishReason = { unified: 'error', raw: undefined };
      this.#emit({ type: 'error', error: new UnreadableAnswer('the stream ended without a finish reason') });
    }
    this.#emit({ type: 'finish', finishReason: this.#finishReason, usage: usageOf(this.#usage), providerMetadata: metadataOf(this.#usage, this.#metadataKey) });
  }

  #fail(error: unknown): void {
    this.#finishReason = { unified: 'error', raw: undefined };
    this.#rawFinishReason = undefined;
    this.#emit({ type: 'error', error });
  }

  #closeReasoning(): void {
    if (this.#reasoning) this.#emit({ type: 'reasoning-end', id: 'reasoning-0' });
    this.#reasoning = false;
  }

  #reasoningDelta(delta: string): void {
    if (this.#text) this.#emit({ type: 'text-end', id: 'txt-0' });
    this.#text = false;
    if (!this.#reasoning) this.#emit({ type: 'reasoning-start', id: 'reasoning-0' });
    this.#reasoning = true;
    this.#emit({ type: 'reasoning-delta', id: 'reasoning-0', delta });
  }

  #textDelta(delta: string): void {
    this.#closeReasoning();
    if (!this.#text) this.#emit({ type: 'text-start', id: 'txt-0' });
    this.#text = true;
    this.#emit({ type: 'text-delta', id: 'txt-0', delta });
  }

  /** A call's fragments are held by index until its name comes, then handed on with all its arguments so far. */
  #toolCallDelta(delta: ToolCallDelta): void {
    const index = delta.index;
    if (index == null || this.#forwarded.has(index)) {
      this.#tracker.processDelta(delta as never);
      return;
    }
    let pending = this.#pending.get(index);
    if (!pending) {
      pending = { id: delta.id ?? null, args: '', extra: delta.extra_content ?? null };
      this.#pending.set(index, pending);
    } else {
      if (pending.id == null && delta.id != null) pending.id = delta.id;
      if (pending.extra == null && delta.extra_content != null) pending.extra = delta.extra_content;
    }
    if (typeof delta.function?.arguments === 'string') pending.args += delta.function.arguments;
    const name = delta.function?.name;
    if (typeof name === 'string') {
      this.#tracker.processDelta({ index, id: pending.id, function: { name, arguments: pending.args }, extra_content: pending.extra ?? undefined } as never);
      this.#pending.delete(index);
      this.#forwarded.add(index);
    }
  }
}
