// One chat completion through any AI SDK language model (an upstream provider's or a local engine's).
//
// generateText is an agent loop: steps, tools, approvals, steering, telemetry events, all set up on every
// call. A completion here is one model call, so this runs the part of generateText that one call needs,
// from the building blocks `ai` exports for it (ai/internal, pinned with `ai`): prompt standardization and
// conversion (built directly for a conversation of text turns: plain-prompt.ts), call-setting validation,
// retries with backoff on retryable errors, then model.doGenerate.
// Same providers, same request body, same errors (the User-Agent lacks generateText's `ai/<version>` part,
// and provider warnings are not logged); about 0.12 ms less per call, measured in a micro-benchmark of the
// two side by side against the local OpenAI-protocol server.
//
// streamChat is the same call through model.doStream: each piece of text and of a tool call is handed on as
// the model produces it (the embedded engine's token callbacks, an upstream's server-sent events), never buffered.
import type { LanguageModel, LanguageModelUsage, ModelMessage } from 'ai';
import type { DownloadFunction } from 'ai/internal';
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FunctionTool,
  LanguageModelV4ToolChoice,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import { loadAiInternal } from './ai-sdk.ts';
import type { ChatDelta, ChatReasoningPart, ChatToolCall } from './chat-model.ts';
import { plainPrompt } from './plain-prompt.ts';
import { partReaderOf } from './part-reader.ts';

export interface ChatCompletionRequest {
  messages: ModelMessage[];
  maxOutputTokens: number;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  stopSequences?: string[] | undefined;
  tools?: LanguageModelV4FunctionTool[] | undefined;
  toolChoice?: LanguageModelV4ToolChoice | undefined;
  responseFormat?: LanguageModelV4CallOptions['responseFormat'];
  /**
   * fetches the images a prompt names by URL; every URL goes through it (never handed to the provider to
   * fetch), so the gateway's bounds and address guard apply. Absent: a URL in the prompt fails the call.
   */
  download?: DownloadFunction | undefined;
  providerOptions: SharedV4ProviderOptions;
  maxRetries: number;
  abortSignal: AbortSignal;
  /**
   * streamChat cuts a stream that goes past maxOutputTokens (an upstream that ignores it). Off for the embedded
   * engines, which stop at it themselves and may hand on a token's text in several pieces.
   */
  holdToMaxOutputTokens?: boolean | undefined;
}

export interface ChatCompletion {
  text: string;
  toolCalls: ChatToolCall[];
  /** what the model thought, in order (empty when it does not think or did not say) */
  reasoning: ChatReasoningPart[];
  usage: LanguageModelUsage;
  /** why the model stopped: 'stop', 'length', ... (the AI SDK's unified reason) */
  finishReason: string;
  /** the stop sequence that ended the answer, where the provider reports it (providerMetadata.<provider>.stopSequence) */
  stopSequence?: string;
}

/** A `stopSequence` string in any provider's metadata (@ai-sdk/anthropic's, the local engine's). */
function stopSequenceOf(metadata: Record<string, Record<string, unknown> | undefined> | undefined): { stopSequence?: string } {
  for (const fields of Object.values(metadata ?? {})) {
    if (typeof fields?.stopSequence === 'string' && fields.stopSequence.length > 0) return { stopSequence: fields.stopSequence };
  }
  return {};
}

/** The model, its call options and a retry wrapper, as generateText would prepare them. */
async function prepareCall(languageModel: LanguageModel, request: ChatCompletionRequest) {
  const { asLanguageModelUsage, convertToLanguageModelPrompt, prepareLanguageModelCallOptions, prepareRetries, resolveLanguageModel, standardizePrompt } =
    await loadAiInternal();
  const model: LanguageModelV4 = resolveLanguageModel(languageModel);
  const { abortSignal, providerOptions } = request;
  const { retry } = prepareRetries({ maxRetries: request.maxRetries, abortSignal });
  const settings = prepareLanguageModelCallOptions({
    maxOutputTokens: request.maxOutputTokens,
    temperature: request.temperature,
    topP: request.topP,
    topK: request.topK,
    presencePenalty: request.presencePenalty,
    frequencyPenalty: request.frequencyPenalty,
    stopSequences: request.stopSequences,
  });
  // a conversation of text turns is built directly (plain-prompt.ts), the same object the SDK builds
  const prompt =
    plainPrompt(request.messages) ??
    (await convertToLanguageModelPrompt({
      // the client's conversation may open with system turns, as chat-completion APIs allow
      prompt: await standardizePrompt({ messages: request.messages, allowSystemInMessages: true }),
      // no URL is left for the provider to fetch: the gateway fetches (or refuses) every one itself
      supportedUrls: {},
      download: request.download ?? refuseDownloads,
      abortSignal,
      provider: model.provider.split('.')[0],
    }));
  const options: LanguageModelV4CallOptions = {
    ...settings,
    prompt,
    providerOptions,
    abortSignal,
    ...(request.tools?.length ? { tools: request.tools, toolChoice: request.toolChoice ?? { type: 'auto' } } : {}),
    ...(request.responseFormat ? { responseFormat: request.responseFormat } : {}),
  };
  return { model, options, retry, usageOf: asLanguageModelUsage };
}

export async function completeChat(languageModel: LanguageModel, request: ChatCompletionRequest): Promise<ChatCompletion> {
  const { model, options, retry, usageOf } = await prepareCall(languageModel, request);
  const result = await retry(() => model.doGenerate(options));
  return { ...answerOf(result.content), usage: usageOf(result.usage), finishReason: result.finishReason.unified, ...stopSequenceOf(result.providerMetadata) };
}

/** The text, the reasoning and the (client-executed) tool calls of a model's answer. */
function answerOf(content: readonly LanguageModelV4Content[]): { text: string; toolCalls: ChatToolCall[]; reasoning: ChatReasoningPart[] } {
  let text = '';
  const toolCalls: ChatToolCall[] = [];
  const reasoning: ChatReasoningPart[] = [];
  for (const part of content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') reasoning.push({ text: part.text, ...handBack(part.providerMetadata) });
    else if (part.type === 'tool-call' && !part.providerExecuted) toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
  }
  return { text, toolCalls, reasoning };
}

/**
 * What a provider needs to be handed a reasoning part back in a later turn: Anthropic's signature or redacted
 * thinking, OpenAI's encrypted reasoning.
 */
function handBack(metadata: Record<string, Record<string, unknown> | undefined> | undefined): Pick<ChatReasoningPart, 'signature' | 'redacted'> {
  const { anthropic, openai } = metadata ?? {};
  const signature = anthropic?.signature ?? openai?.reasoningEncryptedContent;
  const redacted = anthropic?.redactedData;
  return { ...(typeof signature === 'string' ? { signature } : {}), ...(typeof redacted === 'string' ? { redacted } : {}) };
}

const refuseDownloads: DownloadFunction = async (requests) => {
  if (requests.length > 0) throw new Error('images by URL are not fetched on this call');
  return [];
};

/**
 * The most characters one output token is taken to hold: an upstream whose text outgrows maxOutputTokens times
 * this has gone past the tokens it was given, however it splits them into events.
 */
export const MAX_CHARS_PER_TOKEN = 64;

/**
 * The same completion, streamed: `onDelta` gets each piece of text, and each tool call's opening and argument
 * fragments, as the model produces them; the next piece is read from the model only once the promise `onDelta`
 * returns (if any) resolves: a slow reader slows the model down instead of the text piling up in memory. Only
 * opening the stream is retried (a retry after text went out would send it twice). Resolves with the whole answer
 * and the usage once the model finishes; rejects when the model fails mid-stream or the call is aborted.
 *
 * An upstream that streams past the maxOutputTokens it was given (holdToMaxOutputTokens) is cut there: counting
 * one token per text event (an event holds at least one) and MAX_CHARS_PER_TOKEN characters per token, the text
 * past the limit is never passed on, the upstream's stream is cancelled, and the completion finishes with
 * 'length', its output tokens the limit.
 */
export async function streamChat(
  languageModel: LanguageModel,
  request: ChatCompletionRequest,
  onDelta: (delta: ChatDelta) => void | Promise<void>,
): Promise<ChatCompletion> {
  const { model, options, retry, usageOf } = await prepareCall(languageModel, request);
  const streamed = await retry(() => model.doStream(options));
  const maxEvents = request.holdToMaxOutputTokens ? request.maxOutputTokens : Number.POSITIVE_INFINITY;
  const maxChars = request.holdToMaxOutputTokens ? request.maxOutputTokens * MAX_CHARS_PER_TOKEN : Number.POSITIVE_INFINITY;
  let text = '';
  let events = 0;
  const toolCalls: ChatToolCall[] = [];
  const reasoning: ChatReasoningPart[] = [];
  /** the calls opened so far, by the provider's id: their index in this answer and whether arguments came as deltas */
  const opened = new Map<string, { index: number; streamed: string }>();
  // every piece waits for the room its reader makes (text, a call's opening, its arguments alike)
  const pass = (delta: ChatDelta): Promise<void> | undefined => {
    const room = onDelta(delta);
    return room ? orAborted(room, request.abortSignal) : undefined;
  };
  /** the reasoning blocks opened so far, by the provider's id: their index in this answer */
  const thoughts = new Map<string, number>();
  const thought = (id: string, delta: string, metadata: Record<string, Record<string, unknown> | undefined> | undefined) => {
    let index = thoughts.get(id);
    if (index === undefined) {
      thoughts.set(id, (index = reasoning.length));
      reasoning.push({ text: '' });
    }
    const part = reasoning[index]!;
    // what to hand the provider back comes once (a provider may repeat it at the block's end)
    const kept = handBack(metadata);
    const fresh = { ...(kept.signature !== part.signature ? { signature: kept.signature } : {}), ...(kept.redacted !== part.redacted ? { redacted: kept.redacted } : {}) };
    part.text += delta;
    Object.assign(part, kept);
    if (delta || fresh.signature || fresh.redacted !== undefined) return pass({ type: 'reasoning', index, text: delta, ...fresh });
    return undefined;
  };
  const open = async (id: string, name: string) => {
    let call = opened.get(id);
    if (!call) {
      opened.set(id, (call = { index: opened.size, streamed: '' }));
      await pass({ type: 'tool-call', index: call.index, id, name });
    }
    return call;
  };
  let finish: { usage: LanguageModelUsage; finishReason: string; stopSequence?: string } | undefined;
  const reader = partReaderOf(streamed);
  try {
    for (;;) {
      request.abortSignal.throwIfAborted();
      const { done, value: part } = await reader.read();
      if (done) break;
      if (part.type === 'text-delta' && part.delta.length > 0) {
        const delta = part.delta.slice(0, maxChars - text.length);
        if (++events > maxEvents || delta.length === 0) {
          finish = cutAtLimit(request.maxOutputTokens);
          break;
        }
        text += delta;
        const room = pass({ type: 'text', text: delta });
        if (room) await room;
        if (delta.length < part.delta.length) {
          finish = cutAtLimit(request.maxOutputTokens);
          break;
        }
      } else if (part.type === 'reasoning-start' || part.type === 'reasoning-delta' || part.type === 'reasoning-end') {
        await thought(part.id, part.type === 'reasoning-delta' ? part.delta : '', part.providerMetadata);
      } else if (part.type === 'tool-input-start' && !part.providerExecuted) {
        await open(part.id, part.toolName);
      } else if (part.type === 'tool-input-delta' && part.delta.length > 0) {
        const call = opened.get(part.id);
        if (!call) continue;
        call.streamed += part.delta;
        await pass({ type: 'tool-arguments', index: call.index, arguments: part.delta });
      } else if (part.type === 'tool-call' && !part.providerExecuted) {
        // the complete call: what was not streamed as deltas (a provider that sends calls whole) goes out now
        const call = await open(part.toolCallId, part.toolName);
        if (part.input.startsWith(call.streamed) && part.input.length > call.streamed.length) {
          await pass({ type: 'tool-arguments', index: call.index, arguments: part.input.slice(call.streamed.length) });
        }
        toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
      } else if (part.type === 'error') {
        throw part.error;
      } else if (part.type === 'finish') {
        finish = { usage: usageOf(part.usage), finishReason: part.finishReason.unified, ...stopSequenceOf(part.providerMetadata) };
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  request.abortSignal.throwIfAborted();
  // a stream that ends without its finish part was cut short: the answer is incomplete
  if (!finish) throw new Error(`the model's stream ended before it finished`);
  return { text, toolCalls, reasoning, ...finish };
}

/** `waiting`, or the abort's reason once `signal` aborts first (a timeout while the client reads nothing). */
function orAborted(waiting: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    waiting.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, reject);
  });
}

/** How a stream cut at its token limit finishes: 'length', having produced the limit (its input count unknown). */
function cutAtLimit(maxOutputTokens: number): { usage: LanguageModelUsage; finishReason: string } {
  return {
    finishReason: 'length',
    usage: {
      inputTokens: undefined,
      inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: undefined, cacheWriteTokens: undefined },
      outputTokens: maxOutputTokens,
      outputTokenDetails: { textTokens: maxOutputTokens, reasoningTokens: undefined },
      totalTokens: undefined,
    },
  };
}
