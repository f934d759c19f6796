// POST /v1/messages: Anthropic's Messages request translated into the gateway's chat call (prepareChat: same
// model, price, payment and provider call as /v1/chat/completions), and its answer shaped as Anthropic's
// `message`, whole or streamed (message-events.ts).
import type { ModelMessage } from 'ai';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { newChatId, prepareChat, type ChatOutcome } from '../chat.ts';
import { parseOrThrow } from '../validate.ts';
import { chatOutput } from '../chat-output.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { withFieldNames } from '../openai/field-names.ts';
import { messagesEvents } from './message-events.ts';
import {
  messagesRequestSchema,
  REFUSED_MESSAGES_FIELDS,
  type AnthropicMessage,
  type CountTokensRequest,
  type MessagesRequest,
  type MessagesResponse,
  type ResponseBlock,
} from './schemas.ts';

export function prepareMessage(body: unknown, context: EndpointContext): PreparedCall {
  refuseFields(body);
  const request = parseOrThrow(messagesRequestSchema, body);
  refuseUnsupported(request);
  const chat = withFieldNames({ prompt: 'messages' }, () =>
    prepareChat(
      {
        model: request.model,
        messages: toMessages(request),
        maxTokens: request.max_tokens,
        temperature: request.temperature,
        topP: request.top_p,
        stop: request.stop_sequences,
      },
      context,
    ),
  );
  const id = newChatId('msg_');
  const message = (content: ResponseBlock[], stopReason: MessagesResponse['stop_reason'] | null, usage: MessagesResponse['usage']): MessagesResponse =>
    ({ id, type: 'message', role: 'assistant', model: chat.model.id, content, stop_reason: stopReason, stop_sequence: null, usage }) as MessagesResponse;
  const toBody = (outcome: ChatOutcome): MessagesResponse => {
    const content: ResponseBlock[] = outcome.text.length > 0 ? [{ type: 'text', text: outcome.text }] : [];
    return message(content, stopReason(outcome.finishReason), anthropicUsage(outcome.usage));
  };
  return {
    model: chat.model,
    amount: chat.amount,
    async run() {
      return chatOutput(await chat.complete(), toBody);
    },
    ...(request.stream
      ? {
          events: messagesEvents({
            pending: message([], null, { input_tokens: 0, output_tokens: 0 }),
            run: async (onText, signal) => chatOutput(await chat.stream(onText, signal), toBody),
          }),
        }
      : {}),
  };
}

/** The tokens a Messages body reports (the usage headers of a replay). */
export function usageOfMessage(body: unknown): Partial<TokenUsage> | undefined {
  const usage = (body as Partial<MessagesResponse>).usage;
  return usage ? { promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, totalTokens: usage.input_tokens + usage.output_tokens } : undefined;
}

/** Anthropic's stop reasons from the AI SDK's unified finish reasons. */
function stopReason(unified: string): MessagesResponse['stop_reason'] {
  if (unified === 'length') return 'max_tokens';
  if (unified === 'tool-calls') return 'tool_use';
  return 'end_turn';
}

function anthropicUsage(usage: TokenUsage): MessagesResponse['usage'] {
  return { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens };
}

function refuseFields(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  for (const [field, why] of Object.entries(REFUSED_MESSAGES_FIELDS)) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined || value === null) continue;
    // thinking: { type: "disabled" } asks for nothing
    if (field === 'thinking' && (value as { type?: unknown }).type === 'disabled') continue;
    throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
  }
}

/** What the models here cannot honour yet (tools, images): a 400 naming the field. */
function refuseUnsupported(request: MessagesRequest): void {
  if (request.tools && request.tools.length > 0) throw unsupported('tools', 'tools are not supported by this model');
  if (request.tool_choice && request.tool_choice.type !== 'auto' && request.tool_choice.type !== 'none') {
    throw unsupported('tool_choice', 'a forced tool call needs tools');
  }
  request.messages.forEach((message, index) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block, at) => {
      if (block.type !== 'text') throw unsupported(`messages.${index}.content.${at}`, `${block.type} blocks are not supported by this model`);
    });
  });
}

function unsupported(field: string, why: string): ApiError {
  return new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
}

function systemText(system: MessagesRequest['system']): string | undefined {
  if (system === undefined) return undefined;
  return typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
}

/** system first (a system message), then the turns. */
function toMessages(request: MessagesRequest): ModelMessage[] {
  const system = systemText(request.system);
  const messages: ModelMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of request.messages) messages.push(toMessage(message));
  return messages;
}

function toMessage(message: AnthropicMessage): ModelMessage {
  const content = typeof message.content === 'string' ? message.content : message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return { role: message.role, content } as ModelMessage;
}

/** characters per token of the estimate count_tokens gives (English text with common tokenizers) */
const CHARS_PER_TOKEN = 4;
/** tokens each message's role markers add */
const TOKENS_PER_MESSAGE = 4;

/**
 * POST /v1/messages/count_tokens (free): an estimate of the tokens the prompt holds, from its characters
 * (the price table charges input by the character, so the estimate is never what a call costs). Tool
 * definitions, tool inputs and results count as their JSON; an image counts as its source's characters.
 */
export function countTokens(request: CountTokensRequest): { input_tokens: number } {
  let chars = (systemText(request.system) ?? '').length + JSON.stringify(request.tools ?? []).length - 2;
  for (const message of request.messages) {
    chars += typeof message.content === 'string' ? message.content.length : message.content.reduce((sum, block) => sum + blockChars(block), 0);
  }
  return { input_tokens: Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * request.messages.length };
}

function blockChars(block: Exclude<AnthropicMessage['content'], string>[number]): number {
  if (block.type === 'text') return block.text.length;
  if (block.type === 'tool_use') return block.name.length + JSON.stringify(block.input).length;
  if (block.type === 'tool_result') return typeof block.content === 'string' ? block.content.length : JSON.stringify(block.content ?? []).length;
  return JSON.stringify(block.source).length;
}
