// POST /api/v1/ai/chat
import { randomBytes } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { ApiError } from '../errors.ts';
import type { ChatModelConfig } from '../config/schema.ts';
import { meteredChatCost, quoteChat } from '../pricing/quote.ts';
import { toUpstreamError } from '../providers/upstream-errors.ts';
import { completeChat } from '../providers/chat-completion.ts';
import { chatRequestSchema, chatResponseSchema, type ChatRequest, type ChatResponse } from './schemas.ts';
import { allowedOptions, type Endpoint } from './endpoint.ts';
import { parseOrThrow } from './validate.ts';

/** messages, then input, then prompt as a final user message. */
export function toMessages(request: ChatRequest): ModelMessage[] {
  const turns = [...(request.messages ?? []), ...(request.input ?? [])];
  if (request.prompt !== undefined) turns.push({ role: 'user', content: request.prompt });
  return turns;
}

export const chatEndpoint: Endpoint = {
  path: '/api/v1/ai/chat',
  capability: 'chat',
  description: 'Run a chat model',
  summary: 'Generate a chat completion',
  requestSchema: chatRequestSchema,
  responseSchema: chatResponseSchema,
  example: (model) => ({
    request: { model: model.id, prompt: 'Write a haiku about the sea', max_tokens: Math.min(64, (model as ChatModelConfig).maxTokens) },
    response: { id: 'chat_3q2-7wAAAAAAAAAA', model: model.id, response: 'Grey waves fold and break', usage: { tokens: 23 } },
  }),
  prepare(body, { catalog, providers }) {
    const request = parseOrThrow(chatRequestSchema, body);
    const model = catalog.resolve('chat', request.model);
    const maxTokens = request.max_tokens ?? model.defaultMaxTokens;
    if (maxTokens > model.maxTokens) {
      throw new ApiError(400, 'invalid_request', `max_tokens: at most ${model.maxTokens} for model ${model.id}`, {
        field: 'max_tokens',
      });
    }
    const options = allowedOptions(model, request.options, providers.optionsSchema(model));
    const messages = toMessages(request);
    const inputChars = messages.reduce((sum, message) => sum + String(message.content).length, 0);
    const amount = quoteChat(model, maxTokens, inputChars);
    return {
      model,
      amount,
      async run() {
        const settings = providers.settings(model);
        try {
          const result = await completeChat(providers.language(model), {
            messages,
            maxOutputTokens: maxTokens,
            temperature: request.temperature,
            providerOptions: { [settings.providerOptionsKey]: options },
            maxRetries: settings.maxRetries,
            abortSignal: AbortSignal.timeout(settings.timeoutMs),
          });
          // an answer with nothing to read in it (whitespace, zero-width characters) is not the work paid for
          if (!/[^\s\p{Cf}]/u.test(result.text)) throw new ApiError(502, 'upstream_error', `model ${model.id} returned an empty answer; nothing was charged`);
          const tokens = result.usage.totalTokens ?? (result.usage.inputTokens ?? 0) + (result.usage.outputTokens ?? 0);
          const response: ChatResponse = {
            id: `chat_${randomBytes(12).toString('base64url')}`,
            model: model.id,
            response: result.text,
            usage: { tokens },
          };
          // metered: the output actually generated; a provider that reports none is charged the quote
          const outputTokens = result.usage.outputTokens;
          const cost = outputTokens === undefined ? amount : meteredChatCost(model, outputTokens, inputChars, amount);
          return { body: response, media: [], cost };
        } catch (error) {
          throw toUpstreamError(error, model.id);
        }
      },
    };
  },
};
