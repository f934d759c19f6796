// POST /v1/messages: Anthropic's Messages request translated into the gateway's chat call (prepareChat: same
// model, price, payment and provider call as /v1/chat/completions), and its answer shaped as Anthropic's
// `message`, whole or streamed (message-events.ts).
import type { ImagePart, ModelMessage, TextPart, ToolCallPart, ToolResultPart } from 'ai';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { newChatId, prepareChat, type ChatOutcome } from '../chat.ts';
import { parseOrThrow } from '../validate.ts';
import { chatCall } from '../chat-output.ts';
import { parseToolArguments, toolNameOf, type ChatFinishReason, type ChatToolChoice } from '../../providers/chat-model.ts';
import { imageDownloader, imageInput } from '../image-input.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { withFieldNames } from '../openai/field-names.ts';
import { messagesEvents } from './message-events.ts';
import {
  messagesRequestSchema,
  REFUSED_MESSAGES_FIELDS,
  type AnthropicContentBlock,
  type MessagesRequest,
  type MessagesResponse,
  type ResponseBlock,
} from './schemas.ts';

export function prepareMessage(body: unknown, context: EndpointContext): PreparedCall {
  const request = parseOrThrow(messagesRequestSchema, withoutRefused(body));
  const { messages, imageFields } = toMessages(request);
  const chat = withFieldNames({ prompt: 'messages' }, () =>
    prepareChat(
      {
        model: request.model,
        messages,
        maxTokens: request.max_tokens,
        temperature: request.temperature,
        topP: request.top_p,
        stop: request.stop_sequences,
        tools: request.tools?.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.input_schema as JSONSchema7 })),
        toolChoice: toolChoice(request.tool_choice),
        parallelToolCalls: request.tool_choice && 'disable_parallel_tool_use' in request.tool_choice && request.tool_choice.disable_parallel_tool_use ? false : undefined,
        stream: request.stream,
        fields: { tools: 'tools', toolChoice: 'tool_choice', stream: 'stream', image: imageFields.values().next().value },
        download: imageDownloader(context.providers.publicFetch, { fieldOf: (url) => imageFields.get(url.href) }),
      },
      context,
    ),
  );
  const id = newChatId('msg_');
  const message = (content: ResponseBlock[], stopReason: MessagesResponse['stop_reason'] | null, usage: MessagesResponse['usage'], stopSequence: string | null = null): MessagesResponse =>
    ({ id, type: 'message', role: 'assistant', model: chat.model.id, content, stop_reason: stopReason, stop_sequence: stopSequence, usage }) as MessagesResponse;
  const toBody = (outcome: ChatOutcome): MessagesResponse => {
    const content: ResponseBlock[] = outcome.text.length > 0 ? [{ type: 'text', text: outcome.text }] : [];
    for (const call of outcome.toolCalls) content.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: toolInput(call.arguments) });
    if (outcome.stopSequence) return message(content, 'stop_sequence', anthropicUsage(outcome.usage), outcome.stopSequence);
    return message(content, stopReason(outcome.finishReason), anthropicUsage(outcome.usage));
  };
  return chatCall(
    chat,
    toBody,
    request.stream ? (run) => messagesEvents({ pending: message([], null, { input_tokens: 0, output_tokens: 0 }), toolUseId, run }) : undefined,
  );
}

/** The tokens a Messages body reports (the usage headers of a replay). */
export function usageOfMessage(body: unknown): Partial<TokenUsage> | undefined {
  const usage = (body as Partial<MessagesResponse>).usage;
  if (!usage) return undefined;
  const promptTokens = usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
  return { promptTokens, completionTokens: usage.output_tokens, totalTokens: promptTokens + usage.output_tokens };
}

/** Anthropic's ids of tool calls start with toolu_; a model's own id is kept after it. */
function toolUseId(callId: string): string {
  return callId.startsWith('toolu_') ? callId : `toolu_${callId}`;
}

/** A tool_use block's input is an object: arguments that are not a JSON object are kept under `input`. */
function toolInput(argumentsJson: string): Record<string, unknown> {
  const parsed = parseToolArguments(argumentsJson);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { input: parsed };
}

/** Anthropic's stop reasons from the gateway's finish reasons. */
function stopReason(reason: ChatFinishReason): MessagesResponse['stop_reason'] {
  if (reason === 'length') return 'max_tokens';
  if (reason === 'tool_calls') return 'tool_use';
  return 'end_turn';
}

/** Anthropic counts cache reads apart from input_tokens; the gateway's prompt tokens include them. */
function anthropicUsage(usage: TokenUsage): MessagesResponse['usage'] {
  const cached = usage.cachedInputTokens ?? 0;
  return {
    input_tokens: usage.promptTokens - cached,
    output_tokens: usage.completionTokens,
    ...(usage.cachedInputTokens !== undefined ? { cache_read_input_tokens: cached } : {}),
  };
}

function toolChoice(choice: MessagesRequest['tool_choice']): ChatToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool') return { tool: choice.name };
  return choice.type;
}

/** Fields this gateway cannot honour, named before validation; sent empty (null, thinking disabled) they are dropped. */
function withoutRefused(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const rest: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [field, why] of Object.entries(REFUSED_MESSAGES_FIELDS)) {
    const value = rest[field];
    if (value === undefined) continue;
    // the one tier there is: validated with the rest
    if (field === 'service_tier' && (value === 'auto' || value === 'standard_only')) continue;
    if (value === null || (field === 'thinking' && (value as { type?: unknown }).type === 'disabled')) {
      delete rest[field];
      continue;
    }
    throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
  }
  return rest;
}

export function systemText(system: MessagesRequest['system']): string | undefined {
  if (system === undefined) return undefined;
  return typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
}

/**
 * system first (a system message), then the turns. An Anthropic user turn may open with tool_result blocks:
 * they become a tool turn before the rest of it. `imageFields` names where each image sits (by its URL; inline
 * ones by their order), for the 400 of a model without vision and of an image that cannot be fetched.
 */
function toMessages(request: MessagesRequest): { messages: ModelMessage[]; imageFields: Map<string, string> } {
  const system = systemText(request.system);
  const messages: ModelMessage[] = system ? [{ role: 'system', content: system }] : [];
  const imageFields = new Map<string, string>();
  request.messages.forEach((turn, index) => {
    if (typeof turn.content === 'string') {
      messages.push({ role: turn.role, content: turn.content });
      return;
    }
    const results: ToolResultPart[] = [];
    const user: (TextPart | ImagePart)[] = [];
    const assistant: (TextPart | ToolCallPart)[] = [];
    turn.content.forEach((block, at) => {
      const field = `messages.${index}.content.${at}`;
      const refuse = (why: string) => {
        throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
      };
      if (block.type === 'text') (turn.role === 'user' ? user : assistant).push({ type: 'text', text: block.text });
      else if (block.type === 'image') {
        if (turn.role !== 'user') refuse('images only in user turns');
        const url = block.source.type === 'base64' ? `data:${block.source.media_type};base64,${block.source.data}` : block.source.url;
        const { image, mediaType } = imageInput(url, field);
        imageFields.set(image instanceof URL ? image.href : `inline:${imageFields.size}`, field);
        user.push({ type: 'image', image, ...(mediaType ? { mediaType } : {}) });
      } else if (block.type === 'tool_use') {
        if (turn.role !== 'assistant') refuse('tool_use blocks only in assistant turns');
        assistant.push({ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input });
      } else {
        if (turn.role !== 'user') refuse('tool_result blocks only in user turns');
        const toolName = toolNameOf(messages, block.tool_use_id);
        if (!toolName) refuse(`tool_use_id ${block.tool_use_id} answers no tool_use block of an earlier assistant turn`);
        results.push({ type: 'tool-result', toolCallId: block.tool_use_id, toolName: toolName!, output: { type: block.is_error ? 'error-text' : 'text', value: toolResultText(block.content, refuse) } });
      }
    });
    if (results.length > 0) messages.push({ role: 'tool', content: results });
    if (turn.role === 'user' && user.length > 0) messages.push({ role: 'user', content: user });
    // an empty turn (Anthropic allows an empty final assistant turn) says nothing to the model
    if (turn.role === 'assistant' && assistant.length > 0) messages.push({ role: 'assistant', content: assistant });
  });
  if (!messages.some((message) => message.role === 'user' || message.role === 'tool')) {
    throw new ApiError(400, 'invalid_request', 'messages: no user turn with content to answer', { field: 'messages' });
  }
  return { messages, imageFields };
}

function toolResultText(content: Extract<AnthropicContentBlock, { type: 'tool_result' }>['content'], refuse: (why: string) => never): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((block) => {
      if (block.type !== 'text') refuse('a tool_result holds text here, not images');
      return (block as { text: string }).text;
    })
    .join('');
}
