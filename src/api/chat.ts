// The chat call itself (prepareChat), which every chat surface shares (the spec route, chat-endpoint.ts, and
// the OpenAI-compatible ones): one model resolution, one price, one provider call, whichever surface the
// request came through.
import { randomText } from '../lib/random-text.ts';
import type { LanguageModelUsage, ModelMessage } from 'ai';
import type { LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4ToolChoice } from '@ai-sdk/provider';
import { ApiError } from '../errors.ts';
import { meteredChatCost, quoteChat } from '../pricing/quote.ts';
import type { TokenUsage } from '../pricing/token-usage.ts';
import { toUpstreamError } from '../providers/upstream-errors.ts';
import { completeChat, streamChat, type ChatCompletionRequest } from '../providers/chat-completion.ts';
import type { ChatModelConfig } from '../config/schema.ts';
import { allowedOptions, type EndpointContext } from './endpoint.ts';
import { endsWithToolResult, type ChatDelta, type ChatFinishReason, type ChatReasoning, type ChatReasoningPart, type ChatResponseFormat, type ChatTool, type ChatToolCall, type ChatToolsRequest } from '../providers/chat-model.ts';
import type { ChatProviderFeatures } from '../providers/registry.ts';
import type { JSONValue } from '@ai-sdk/provider';
import type { RequestNotes } from './request-notes.ts';
import type { DownloadFunction } from 'ai/internal';
import { isStreamDeadline } from './stream-deadline.ts';
import { withCallTimeout } from '../lib/call-timeout.ts';

/** what a model reads where a tool result held an image (images in tool results are not passed to models here) */
export const TOOL_RESULT_IMAGE = '[an image the tool returned; images in tool results are not passed to the model here]';

/** what each message counts toward a model's maxInputChars beyond its text: its role markers */
export const PROMPT_CHARS_PER_MESSAGE = 16;

/** A chat request as any surface states it, in the gateway's terms (chat-model.ts). */
export interface ChatCall extends ChatToolsRequest {
  model: string;
  messages: ModelMessage[];
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  /** sample from the k likeliest tokens (Anthropic's top_k) */
  topK?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  stop?: string[] | undefined;
  responseFormat?: ChatResponseFormat | undefined;
  /** the answer is wanted as a stream (refused for a model that cannot stream) */
  stream?: boolean | undefined;
  /** how the model should think; reaches reasoning models only (ProviderRegistry.chatFeatures) */
  reasoning?: ChatReasoning | undefined;
  /** OpenAI's prompt_cache_key, for the upstreams that read it */
  promptCacheKey?: string | undefined;
  /** Anthropic's context_management edits (in @ai-sdk/anthropic's words), for the upstreams that read them */
  contextManagement?: JSONValue | undefined;
  /**
   * The request fields that asked for what only some providers read (thinking, cache_control, ...), by feature:
   * those the model's provider does not read are noted as ignored.
   */
  featureFields?: Partial<Record<keyof ChatProviderFeatures, readonly string[]>> | undefined;
  /**
   * What the call ignored or lowered, for the client (request-notes.ts). Given, a max_tokens above the model's
   * ceiling is lowered to it and noted (an agent surface); absent, it is a 400 (the spec route).
   */
  notes?: RequestNotes | undefined;
  options?: Record<string, string | number | boolean> | undefined;
  /**
   * the request fields holding each feature, in the surface's own words, for the 400 that refuses one the model
   * lacks (default: tools, tool_choice, response_format, stream, messages); `image` names the first image part
   */
  fields?:
    | (Partial<Record<'tools' | 'toolChoice' | 'responseFormat' | 'responseSchema' | 'stream' | 'image' | 'maxTokens', string>> & {
        /** the field of tool `index`'s parameter schema (default tools[index].function.parameters) */
        toolParameters?: (index: number) => string;
      })
    | undefined;
  /** fetches images given by remote URL (image-input.ts); absent, such a part fails the call */
  download?: DownloadFunction | undefined;
}

export interface ChatOutcome {
  text: string;
  /** the calls the model made, in order; empty when it answered in text only */
  toolCalls: ChatToolCall[];
  /** what the model thought, in order; empty when it does not think or did not say */
  reasoning: ChatReasoningPart[];
  finishReason: ChatFinishReason;
  /** with finishReason 'stop': the request's stop sequence that ended the answer, where the model reports it */
  stopSequence?: string;
  usage: TokenUsage;
  /** metered: what the output actually generated costs, at most the quote (the quote when the model reports none) */
  cost: bigint;
}

export interface PreparedChat {
  model: ChatModelConfig;
  amount: bigint;
  /** the whole answer at once */
  complete(): Promise<ChatOutcome>;
  /**
   * The answer piece by piece as the model produces it (text, tool calls), the next piece read once `onDelta`'s
   * promise (if any) resolves; rejects if the model fails or `signal` aborts.
   */
  stream(onDelta: (delta: ChatDelta) => void | Promise<void>, signal: AbortSignal): Promise<ChatOutcome>;
}

export function prepareChat(call: ChatCall, { catalog, providers }: EndpointContext): PreparedChat {
  const model = catalog.resolve('chat', call.model);
  const maxTokens = maxTokensFor(model, call);
  const features = providers.chatFeatures(model);
  for (const [feature, fields] of Object.entries(call.featureFields ?? {})) {
    if (!features[feature as keyof ChatProviderFeatures]) for (const field of fields) call.notes?.ignore(field);
  }
  const reasoning = reasoningFor(call, features, maxTokens);
  // a thinking budget is part of the answer's tokens; @ai-sdk/anthropic adds it on top of the answer's own share
  const budget = reasoning?.thinking?.type === 'enabled' ? reasoning.thinking.budgetTokens : 0;
  refuseUnsupported(model, call);
  refuseUnansweredToolCalls(call.messages);
  const tools = toolsOf(call);
  refuseUnfollowableSchemas(model, call, tools, maxTokens, providers);
  const options = allowedOptions(model, call.options, providers.optionsSchema(model));
  const messageChars = call.messages.reduce((sum, message) => sum + messageInputChars(message, model.imageInputChars), 0);
  // before the quote: a prompt the model cannot hold would be paid for and then fail
  const promptSize = messageChars + PROMPT_CHARS_PER_MESSAGE * call.messages.length;
  if (model.maxInputChars !== undefined && promptSize > model.maxInputChars) {
    // in the words agents look for to compact their conversation and go on (Claude Code: "prompt is too long";
    // OpenAI's clients: the code context_length_exceeded, "maximum context length")
    throw new ApiError(
      400,
      'context_length_exceeded',
      `the prompt is too long: ${promptSize} characters (${PROMPT_CHARS_PER_MESSAGE} per message included) > ${model.maxInputChars}, the maximum context length of model ${model.id}`,
      { field: 'prompt' },
    );
  }
  // tool definitions and the response schema are sent to the model with the messages: priced as prompt characters
  const inputChars = messageChars + definitionChars(call);
  const settings = providers.settings(model);
  const request = (abortSignal: AbortSignal): ChatCompletionRequest => ({
    messages: call.messages,
    maxOutputTokens: maxTokens - budget,
    temperature: call.temperature,
    topP: call.topP,
    topK: call.topK,
    presencePenalty: call.presencePenalty,
    frequencyPenalty: call.frequencyPenalty,
    stopSequences: call.stop,
    ...tools,
    responseFormat: responseFormatOf(call.responseFormat),
    download: call.download,
    providerOptions: { [settings.providerOptionsKey]: { ...options, ...providers.chatCallOptions(model, { ...call, reasoning }) } },
    maxRetries: settings.maxRetries,
    abortSignal,
    holdToMaxOutputTokens: settings.upstream,
  });
  const amount = quoteChat(model, maxTokens, inputChars);
  const checked = (result: { text: string; toolCalls: ChatToolCall[]; reasoning: ChatReasoningPart[]; finishReason: string; stopSequence?: string; usage: LanguageModelUsage }): ChatOutcome => {
    // an answer with nothing to read in it (whitespace, zero-width characters) and no call is not the work paid for
    if (result.toolCalls.length === 0 && !/[^\s\p{Cf}]/u.test(result.text)) {
      throw new ApiError(502, 'upstream_error', `model ${model.id} returned an empty answer; nothing was charged`);
    }
    const usage = tokenUsage(result.usage);
    const outputTokens = result.usage.outputTokens;
    const cache = usage.cachedInputTokens ? { inputTokens: usage.promptTokens, cachedInputTokens: usage.cachedInputTokens } : undefined;
    const cost = outputTokens === undefined ? amount : meteredChatCost(model, outputTokens, inputChars, amount, cache);
    const finishReason = finishReasonOf(result);
    const stopSequence = finishReason === 'stop' ? result.stopSequence : undefined;
    return { text: result.text, toolCalls: result.toolCalls, reasoning: result.reasoning, finishReason, ...(stopSequence ? { stopSequence } : {}), usage, cost };
  };
  return {
    model,
    amount,
    async complete() {
      try {
        return checked(await withCallTimeout(settings.timeoutMs, undefined, (limit) => completeChat(providers.language(model), request(limit))));
      } catch (error) {
        throw toUpstreamError(error, model.id);
      }
    },
    async stream(onDelta, signal) {
      let sent = '';
      let pieces = 0;
      const counted = (delta: ChatDelta) => {
        if (delta.type === 'text') {
          sent += delta.text;
          pieces += 1;
        }
        return onDelta(delta); // its promise is the client's backpressure: the next piece waits for it
      };
      try {
        return checked(await withCallTimeout(settings.timeoutMs, signal, (limit) => streamChat(providers.language(model), request(limit), counted)));
      } catch (error) {
        // stopped at its payment's deadline: the text sent is the answer, each piece of it counted as a token
        if (isStreamDeadline(signal)) {
          // (a tool call cut short is no call, and reasoning is not the answer: neither is in it, nor charged)
          return checked({ text: sent, toolCalls: [], reasoning: [], finishReason: 'length', usage: { inputTokens: undefined, outputTokens: pieces, totalTokens: pieces } as LanguageModelUsage });
        }
        // the client left: not an upstream failure, and never reported as one
        if (signal.aborted) throw signal.reason;
        throw toUpstreamError(error, model.id);
      }
    },
  };
}

/**
 * The answer's token limit: the request's, or the model's default. Above the model's ceiling it is a 400, or, on
 * an agent surface (call.notes), lowered to the ceiling and noted, and priced as lowered.
 */
function maxTokensFor(model: ChatModelConfig, call: ChatCall): number {
  const asked = call.maxTokens ?? model.defaultMaxTokens;
  if (asked <= model.maxTokens) return asked;
  const field = call.fields?.maxTokens ?? 'max_tokens';
  if (!call.notes) throw new ApiError(400, 'invalid_request', `max_tokens: at most ${model.maxTokens} for model ${model.id}`, { field: 'max_tokens' });
  call.notes.clamp(field, model.maxTokens);
  return model.maxTokens;
}

/** Anthropic's least thinking budget */
const MIN_THINKING_BUDGET = 1024;

/**
 * The reasoning settings that reach the model: none when it does not reason; a thinking budget lowered below
 * the answer's token limit (noted), and thinking left out (noted) when that leaves less than Anthropic's least.
 */
function reasoningFor(call: ChatCall, features: ChatProviderFeatures, maxTokens: number): ChatReasoning | undefined {
  if (!call.reasoning) return undefined;
  const { thinking, display, effort } = call.reasoning;
  const reasoning: ChatReasoning = { ...(features.effort && effort ? { effort } : {}), ...(features.thinking && thinking ? { thinking, display } : {}) };
  if (reasoning.thinking?.type !== 'enabled' || reasoning.thinking.budgetTokens < maxTokens) return reasoning;
  // (only Anthropic's thinking has a budget: the field is its own)
  if (maxTokens - 1 < MIN_THINKING_BUDGET) {
    call.notes?.ignore('thinking');
    return { ...(reasoning.effort ? { effort: reasoning.effort } : {}) };
  }
  call.notes?.clamp('thinking.budget_tokens', maxTokens - 1);
  return { ...reasoning, thinking: { type: 'enabled', budgetTokens: maxTokens - 1 } };
}

/**
 * A tool call must have its result before the conversation goes on (as OpenAI and Anthropic require): a 400 naming
 * it, before any price. The AI SDK refuses the same prompt only once the model is called (MissingToolResultsError),
 * which would be a paid call failing; its rule, kept here: results may come in any tool turn before the next user or
 * system turn, and calls the provider ran itself need none.
 */
function refuseUnansweredToolCalls(messages: readonly ModelMessage[]): void {
  const open = new Set<string>();
  const refuse = () => {
    const ids = [...open].slice(0, 3).map((id) => JSON.stringify(id)).join(', ');
    throw new ApiError(400, 'invalid_request', `prompt: tool call ${ids} has no result: each tool call needs its result (a tool message, tool_result block or function_call_output) before the conversation goes on`, {
      field: 'prompt',
    });
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      if (typeof message.content !== 'string') for (const part of message.content) if (part.type === 'tool-call' && !part.providerExecuted) open.add(part.toolCallId);
    } else if (message.role === 'tool') {
      for (const part of message.content) if (part.type === 'tool-result') open.delete(part.toolCallId);
    } else if (open.size > 0) refuse();
  }
  if (open.size > 0) refuse();
}

/** A feature the model does not list in `supports` is a 400 naming the request's field, before any price. */
function refuseUnsupported(model: ChatModelConfig, call: ChatCall): void {
  const refuse = (field: string, what: string) => {
    throw new ApiError(400, 'invalid_request', `${field}: model ${model.id} does not support ${what}`, { field });
  };
  const named = call.fields ?? {};
  if (call.tools?.length && !model.supports.tools) refuse(named.tools ?? 'tools', 'tools');
  if (call.toolChoice !== undefined && call.toolChoice !== 'auto' && call.toolChoice !== 'none' && !model.supports.tools) refuse(named.toolChoice ?? 'tool_choice', 'tools');
  const format = call.responseFormat?.type;
  if ((format === 'json_schema' || format === 'json_object') && !model.supports.jsonSchema) refuse(named.responseFormat ?? 'response_format', `response_format ${format}`);
  if (call.stream && !model.supports.streaming) refuse(named.stream ?? 'stream', 'streaming');
  if (!model.supports.vision && call.messages.some((message) => imageParts(message) > 0)) refuse(named.image ?? 'messages', 'image input');
}

/**
 * A JSON Schema the model's engine cannot follow (too large to read, or whose shortest answer cannot fit
 * max_tokens) is a 400 naming the field and the part, before any price: such work could only fail.
 */
function refuseUnfollowableSchemas(
  model: ChatModelConfig,
  call: ChatCall,
  tools: ReturnType<typeof toolsOf>,
  maxTokens: number,
  providers: EndpointContext['providers'],
): void {
  const problem = providers.chatSchemaProblem(model, {
    ...tools,
    responseFormat: responseFormatOf(call.responseFormat),
    endsWithToolResult: endsWithToolResult(call.messages),
    maxTokens,
  });
  if (!problem) return;
  const field =
    problem.tool === undefined
      ? (call.fields?.responseSchema ?? 'response_format.json_schema.schema')
      : (call.fields?.toolParameters?.(problem.tool) ?? `tools[${problem.tool}].function.parameters`);
  throw new ApiError(400, 'invalid_request', `${field}: model ${model.id} cannot follow this schema: ${problem.why}`, { field });
}

/** The tools and tool choice as the AI SDK's call options; a 400 for a choice naming no declared tool. */
function toolsOf(call: ChatCall): { tools?: LanguageModelV4FunctionTool[]; toolChoice?: LanguageModelV4ToolChoice } {
  const choice = call.toolChoice;
  const field = call.fields?.toolChoice ?? 'tool_choice';
  if (!call.tools?.length) {
    if (choice === 'required' || typeof choice === 'object') throw new ApiError(400, 'invalid_request', `${field}: no tools were given`, { field });
    return {};
  }
  const names = new Set<string>();
  for (const tool of call.tools) {
    if (names.has(tool.name)) {
      const toolsField = call.fields?.tools ?? 'tools';
      throw new ApiError(400, 'invalid_request', `${toolsField}: two tools are named ${tool.name}`, { field: toolsField });
    }
    names.add(tool.name);
  }
  if (typeof choice === 'object' && !names.has(choice.tool)) {
    throw new ApiError(400, 'invalid_request', `${field}: names ${choice.tool}, which is not one of the tools`, { field });
  }
  return {
    tools: call.tools.map(toFunctionTool),
    toolChoice: choice === undefined || choice === 'auto' ? { type: 'auto' } : typeof choice === 'object' ? { type: 'tool', toolName: choice.tool } : { type: choice },
  };
}

function toFunctionTool(tool: ChatTool): LanguageModelV4FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.parameters,
    ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    ...(tool.providerOptions ? { providerOptions: tool.providerOptions } : {}),
  };
}

function responseFormatOf(format: ChatResponseFormat | undefined): LanguageModelV4CallOptions['responseFormat'] {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json' };
  return { type: 'json', schema: format.schema, name: format.name, ...(format.description !== undefined ? { description: format.description } : {}) };
}

/** What the prompt's tool definitions and response schema add to it, in characters of their JSON. */
function definitionChars(call: ChatCall): number {
  let chars = 0;
  for (const tool of call.tools ?? []) chars += JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }).length;
  if (call.responseFormat?.type === 'json_schema') chars += JSON.stringify(call.responseFormat.schema).length + call.responseFormat.name.length;
  return chars;
}

function imageParts(message: ModelMessage): number {
  if (message.role !== 'user' || typeof message.content === 'string') return 0;
  return message.content.filter((part) => part.type === 'image' || (part.type === 'file' && part.mediaType.startsWith('image/'))).length;
}

/**
 * A message's prompt characters: its text, a tool call's name and arguments, a tool result's content, and
 * `imageChars` for each image part (docs/agent-chat.md: an image is priced as that many characters).
 */
export function messageInputChars(message: ModelMessage, imageChars: number): number {
  if (typeof message.content === 'string') return message.content.length;
  let chars = 0;
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        chars += part.text.length;
        break;
      case 'image':
        chars += imageChars;
        break;
      case 'file':
        chars += part.mediaType.startsWith('image/') ? imageChars : 0;
        break;
      case 'tool-call':
        chars += part.toolName.length + (typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? null)).length;
        break;
      case 'tool-result':
        chars += toolOutputChars(part.output);
        break;
    }
  }
  return chars;
}

function toolOutputChars(output: { type: string; value?: unknown }): number {
  if (typeof output.value === 'string') return output.value.length;
  return output.value === undefined ? 0 : JSON.stringify(output.value).length;
}

/** The answer's finish reason in the gateway's words: a call that ended the answer is `tool_calls`. */
function finishReasonOf(result: { toolCalls: ChatToolCall[]; finishReason: string }): ChatFinishReason {
  if (result.finishReason === 'length') return 'length';
  if (result.finishReason === 'content-filter') return 'content_filter';
  if (result.finishReason === 'tool-calls' || result.toolCalls.length > 0) return 'tool_calls';
  return 'stop';
}

function tokenUsage(usage: LanguageModelUsage): TokenUsage {
  const promptTokens = usage.inputTokens ?? 0;
  const completionTokens = usage.outputTokens ?? 0;
  const cachedInputTokens = usage.inputTokenDetails?.cacheReadTokens;
  const cacheWriteInputTokens = usage.inputTokenDetails?.cacheWriteTokens;
  const reasoningTokens = usage.outputTokenDetails?.reasoningTokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.totalTokens ?? promptTokens + completionTokens,
    // reported only when the provider counted them
    ...(cachedInputTokens ? { cachedInputTokens } : {}),
    ...(cacheWriteInputTokens ? { cacheWriteInputTokens } : {}),
    ...(reasoningTokens ? { reasoningTokens } : {}),
  };
}

export function newChatId(prefix: string): string {
  return `${prefix}${randomText(12, 'base64url')}`;
}
