// POST /api/v1/ai/chat, and the chat call itself (prepareChat), which the OpenAI-compatible route shares:
// one model resolution, one price, one provider call, whichever surface the request came through.
import { randomBytes } from 'node:crypto';
import type { LanguageModelUsage, ModelMessage } from 'ai';
import { ApiError } from '../errors.ts';
import { meteredChatCost, quoteChat } from '../pricing/quote.ts';
import type { TokenUsage } from '../pricing/token-usage.ts';
import { toUpstreamError } from '../providers/upstream-errors.ts';
import { completeChat, streamChat, type ChatCompletionRequest } from '../providers/chat-completion.ts';
import type { ChatModelConfig } from '../config/schema.ts';
import { chatRequestSchema, chatResponseSchema, type ChatRequest, type ChatResponse } from './schemas.ts';
import { allowedOptions, type Endpoint, type EndpointContext, type PreparedCall } from './endpoint.ts';
import { parseOrThrow } from './validate.ts';
import { specChatEvents } from './chat-events.ts';
import { chatOutput } from './chat-output.ts';
import { isStreamDeadline } from './stream-deadline.ts';

/** what each message counts toward a model's maxInputChars beyond its text: its role markers */
export const PROMPT_CHARS_PER_MESSAGE = 16;

/** messages, then input, then prompt as a final user message. */
export function toMessages(request: ChatRequest): ModelMessage[] {
  const turns = [...(request.messages ?? []), ...(request.input ?? [])];
  if (request.prompt !== undefined) turns.push({ role: 'user', content: request.prompt });
  return turns;
}

/** A chat request as either surface states it, in the gateway's terms. */
export interface ChatCall {
  model: string;
  messages: ModelMessage[];
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  stop?: string[] | undefined;
  options?: Record<string, string | number | boolean> | undefined;
}

export interface ChatOutcome {
  text: string;
  finishReason: string;
  usage: TokenUsage;
  /** metered: what the output actually generated costs, at most the quote (the quote when the model reports none) */
  cost: bigint;
}

export interface PreparedChat {
  model: ChatModelConfig;
  amount: bigint;
  /** the whole answer at once */
  complete(): Promise<ChatOutcome>;
  /** the answer piece by piece as the model produces it; rejects if the model fails or `signal` aborts */
  stream(onText: (delta: string) => void, signal: AbortSignal): Promise<ChatOutcome>;
}

export function prepareChat(call: ChatCall, { catalog, providers }: EndpointContext): PreparedChat {
  const model = catalog.resolve('chat', call.model);
  const maxTokens = call.maxTokens ?? model.defaultMaxTokens;
  if (maxTokens > model.maxTokens) {
    throw new ApiError(400, 'invalid_request', `max_tokens: at most ${model.maxTokens} for model ${model.id}`, { field: 'max_tokens' });
  }
  const options = allowedOptions(model, call.options, providers.optionsSchema(model));
  const inputChars = call.messages.reduce((sum, message) => sum + String(message.content).length, 0);
  // before the quote: a prompt the model cannot hold would be paid for and then fail
  const promptSize = inputChars + PROMPT_CHARS_PER_MESSAGE * call.messages.length;
  if (model.maxInputChars !== undefined && promptSize > model.maxInputChars) {
    throw new ApiError(
      400,
      'invalid_request',
      `prompt: ${promptSize} characters (${PROMPT_CHARS_PER_MESSAGE} per message included) is over model ${model.id}'s limit of ${model.maxInputChars}`,
      { field: 'prompt' },
    );
  }
  const request = (signal?: AbortSignal): ChatCompletionRequest => {
    const settings = providers.settings(model);
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    return {
      messages: call.messages,
      maxOutputTokens: maxTokens,
      temperature: call.temperature,
      topP: call.topP,
      presencePenalty: call.presencePenalty,
      frequencyPenalty: call.frequencyPenalty,
      stopSequences: call.stop,
      providerOptions: { [settings.providerOptionsKey]: options },
      maxRetries: settings.maxRetries,
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    };
  };
  const amount = quoteChat(model, maxTokens, inputChars);
  const checked = (result: { text: string; finishReason: string; usage: LanguageModelUsage }): ChatOutcome => {
    // an answer with nothing to read in it (whitespace, zero-width characters) is not the work paid for
    if (!/[^\s\p{Cf}]/u.test(result.text)) throw new ApiError(502, 'upstream_error', `model ${model.id} returned an empty answer; nothing was charged`);
    const outputTokens = result.usage.outputTokens;
    const cost = outputTokens === undefined ? amount : meteredChatCost(model, outputTokens, inputChars, amount);
    return { text: result.text, finishReason: result.finishReason, usage: tokenUsage(result.usage), cost };
  };
  return {
    model,
    amount,
    async complete() {
      try {
        return checked(await completeChat(providers.language(model), request()));
      } catch (error) {
        throw toUpstreamError(error, model.id);
      }
    },
    async stream(onText, signal) {
      let sent = '';
      let pieces = 0;
      const counted = (delta: string) => {
        sent += delta;
        pieces += 1;
        onText(delta);
      };
      try {
        return checked(await streamChat(providers.language(model), request(signal), counted));
      } catch (error) {
        // stopped at its payment's deadline: what was sent is the answer, each piece counted as a token
        if (isStreamDeadline(signal)) {
          return checked({ text: sent, finishReason: 'length', usage: { inputTokens: undefined, outputTokens: pieces, totalTokens: pieces } as LanguageModelUsage });
        }
        // the client left: not an upstream failure, and never reported as one
        if (signal.aborted) throw signal.reason;
        throw toUpstreamError(error, model.id);
      }
    },
  };
}

function tokenUsage(usage: LanguageModelUsage): TokenUsage {
  const promptTokens = usage.inputTokens ?? 0;
  const completionTokens = usage.outputTokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: usage.totalTokens ?? promptTokens + completionTokens };
}

export function newChatId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('base64url')}`;
}

export const chatEndpoint: Endpoint = {
  path: '/api/v1/ai/chat',
  capability: 'chat',
  description: 'Run a chat model',
  summary: 'Generate a chat completion',
  requestSchema: chatRequestSchema,
  responseSchema: chatResponseSchema,
  metered: true,
  example: (model) => ({
    request: { model: model.id, prompt: 'Write a haiku about the sea', max_tokens: Math.min(64, (model as ChatModelConfig).maxTokens) },
    response: { id: 'chat_3q2-7wAAAAAAAAAA', model: model.id, response: 'Grey waves fold and break', usage: { tokens: 23 } },
  }),
  prepare(body, context): PreparedCall {
    const request = parseOrThrow(chatRequestSchema, body);
    const chat = prepareChat(
      { model: request.model, messages: toMessages(request), maxTokens: request.max_tokens, temperature: request.temperature, options: request.options },
      context,
    );
    const id = newChatId('chat_');
    const toBody = (outcome: ChatOutcome): ChatResponse => ({ id, model: chat.model.id, response: outcome.text, usage: { tokens: outcome.usage.totalTokens } });
    return {
      model: chat.model,
      amount: chat.amount,
      async run() {
        const outcome = await chat.complete();
        return chatOutput(outcome, toBody);
      },
      ...(request.stream ? { events: specChatEvents(id, chat, toBody) } : {}),
    };
  },
  usageOf: (body) => ({ totalTokens: (body as ChatResponse).usage.tokens }),
};
