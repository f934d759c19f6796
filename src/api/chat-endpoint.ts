// POST /api/v1/ai/chat: the spec's chat route over the one chat call (chat.ts) every chat surface shares.
import type { ModelMessage } from 'ai';
import type { ChatModelConfig } from '../config/schema.ts';
import { chatRequestSchema, chatResponseSchema, type ChatRequest, type ChatResponse } from './schemas.ts';
import type { Endpoint, PreparedCall } from './endpoint.ts';
import { parseOrThrow } from './validate.ts';
import { newChatId, prepareChat, type ChatOutcome } from './chat.ts';
import { chatCall } from './chat-output.ts';
import { specChatEvents } from './chat-events.ts';

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
  metered: true,
  example: (model) => ({
    request: { model: model.id, prompt: 'Write a haiku about the sea', max_tokens: Math.min(64, (model as ChatModelConfig).maxTokens) },
    response: { id: 'chat_3q2-7wAAAAAAAAAA', model: model.id, response: 'Grey waves fold and break', usage: { tokens: 23 } },
  }),
  prepare(body, context): PreparedCall {
    const request = parseOrThrow(chatRequestSchema, body);
    const chat = prepareChat(
      { model: request.model, messages: toMessages(request), maxTokens: request.max_tokens, temperature: request.temperature, options: request.options, stream: request.stream },
      context,
    );
    const id = newChatId('chat_');
    const toBody = (outcome: ChatOutcome): ChatResponse => ({ id, model: chat.model.id, response: outcome.text, usage: { tokens: outcome.usage.totalTokens } });
    return chatCall(chat, toBody, request.stream ? specChatEvents(id, chat.model.id) : undefined);
  },
  usageOf: (body) => ({ totalTokens: (body as ChatResponse).usage.tokens }),
};
