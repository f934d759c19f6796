// POST /v1/responses: OpenAI's Responses API request translated into the gateway's chat call (prepareChat:
// same model, price, payment and provider call as /v1/chat/completions), and its answer shaped as a Responses
// `response` object, whole or streamed (responses-events.ts).
//
// Stateless: nothing is stored, so the answer always says `store: false`, and the fields that need stored
// state (previous_response_id, conversation, prompt, background, ...) are a 400 naming the field before any
// price. A conversation is sent whole as input items, as a stateless client of the Responses API does:
// messages, the model's earlier `function_call` items and the client's `function_call_output` items.
import type { ModelMessage, TextPart, ImagePart, ToolCallPart, ToolResultPart } from 'ai';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { newChatId, prepareChat, type ChatOutcome } from '../chat.ts';
import { parseToolArguments, toolNameOf, type ChatResponseFormat, type ChatToolChoice } from '../../providers/chat-model.ts';
import { parseOrThrow } from '../validate.ts';
import { chatCall } from '../chat-output.ts';
import { imageDownloader, imageInput } from '../image-input.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { withFieldNames } from './field-names.ts';
import { responsesEvents } from './responses-events.ts';
import {
  REFUSED_RESPONSES_FIELDS,
  responsesRequestSchema,
  type OutputItem,
  type ResponsesRequest,
  type ResponsesResponse,
} from './responses-schemas.ts';

export function prepareResponse(body: unknown, context: EndpointContext): PreparedCall {
  const request = parseOrThrow(responsesRequestSchema, withoutStoredState(body));
  const { messages, imageFields } = toMessages(request);
  const chat = withFieldNames({ max_tokens: 'max_output_tokens', prompt: 'input' }, () =>
    prepareChat(
      {
        model: request.model,
        messages,
        maxTokens: request.max_output_tokens ?? undefined,
        temperature: request.temperature ?? undefined,
        topP: request.top_p ?? undefined,
        tools: request.tools?.map((tool) => ({
          name: tool.name,
          description: tool.description ?? undefined,
          parameters: (tool.parameters ?? { type: 'object', properties: {} }) as JSONSchema7,
          strict: tool.strict ?? undefined,
        })),
        toolChoice: toolChoice(request.tool_choice),
        parallelToolCalls: request.parallel_tool_calls ?? undefined,
        responseFormat: responseFormat(request.text?.format),
        stream: request.stream ?? undefined,
        fields: { tools: 'tools', toolChoice: 'tool_choice', responseFormat: 'text.format', stream: 'stream', image: imageFields.values().next().value },
        download: imageDownloader(context.providers.publicFetch, { fieldOf: (url) => imageFields.get(url.href) }),
      },
      context,
    ),
  );
  const id = newChatId('resp_');
  // item ids from the response's: the streamed items and the final body name the same items
  const messageId = `msg_${id.slice(5)}`;
  const callItemId = (index: number) => `fc_${id.slice(5)}_${index}`;
  const createdAt = Math.floor(Date.now() / 1000);
  const response = (status: ResponsesResponse['status'], output: OutputItem[], usage: ResponsesResponse['usage'], reason?: string): ResponsesResponse => ({
    id,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: reason ? { reason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: chat.model.id,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: (request.tools ?? []).map((tool) => ({ description: null, parameters: null, strict: null, ...tool })),
    top_p: request.top_p ?? 1,
    truncation: 'disabled',
    usage,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  });
  const toBody = (outcome: ChatOutcome): ResponsesResponse => {
    const cut = outcome.finishReason === 'length';
    const status = cut ? 'incomplete' : 'completed';
    const output: OutputItem[] = [];
    if (outcome.text.length > 0) {
      output.push({ type: 'message', id: messageId, status, role: 'assistant', content: [{ type: 'output_text', text: outcome.text, annotations: [], logprobs: [] }] });
    }
    outcome.toolCalls.forEach((call, index) => {
      output.push({ type: 'function_call', id: callItemId(index), call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed' });
    });
    return response(status, output, responsesUsage(outcome.usage), cut ? 'max_output_tokens' : undefined);
  };
  return chatCall(
    chat,
    toBody,
    request.stream ? (run) => responsesEvents({ pending: response('in_progress', [], null), messageId, callItemId, run }) : undefined,
  );
}

/** The tokens a Responses body reports (the usage headers of a replay). */
export function usageOfResponse(body: unknown): Partial<TokenUsage> | undefined {
  const usage = (body as Partial<ResponsesResponse>).usage;
  return usage ? { promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, totalTokens: usage.total_tokens } : undefined;
}

function responsesUsage(usage: TokenUsage): ResponsesResponse['usage'] {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}

/**
 * Stored-state fields are named before the body is even validated: they are the likeliest surprise. Sent empty
 * (null, false, []), they ask for nothing and are dropped; the rest of the body is returned for validation.
 */
function withoutStoredState(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const rest: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [field, why] of Object.entries(REFUSED_RESPONSES_FIELDS)) {
    const value = rest[field];
    if (value === undefined) continue;
    // the one tier there is: validated with the rest
    if (field === 'service_tier' && (value === 'auto' || value === 'default')) continue;
    if (value === null || value === false || (Array.isArray(value) && value.length === 0)) {
      delete rest[field];
      continue;
    }
    throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
  }
  return rest;
}

function toolChoice(choice: ResponsesRequest['tool_choice']): ChatToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  return { tool: choice.name };
}

function responseFormat(format: NonNullable<ResponsesRequest['text']>['format']): ChatResponseFormat | undefined {
  if (!format || format.type !== 'json_schema') return format;
  return { type: 'json_schema', name: format.name, description: format.description, schema: format.schema as JSONSchema7, strict: format.strict ?? undefined };
}

/**
 * instructions first (a system message), then the input: a string is one user message; items become turns,
 * consecutive function calls one assistant turn (with the assistant text before them), consecutive outputs one
 * tool turn. `imageFields` names where each image sits (by its URL; inline ones by their order), for the 400 of
 * a model without vision and of an image that cannot be fetched.
 */
function toMessages(request: ResponsesRequest): { messages: ModelMessage[]; imageFields: Map<string, string> } {
  const messages: ModelMessage[] = [];
  const imageFields = new Map<string, string>();
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  if (typeof request.input === 'string') return { messages: [...messages, { role: 'user', content: request.input }], imageFields };
  request.input.forEach((item, index) => {
    const last = messages.at(-1);
    if (item.type === 'function_call') {
      const call: ToolCallPart = { type: 'tool-call', toolCallId: item.call_id, toolName: item.name, input: parseToolArguments(item.arguments) };
      if (last?.role === 'assistant') last.content = [...asParts(last.content), call];
      else messages.push({ role: 'assistant', content: [call] });
      return;
    }
    if (item.type === 'function_call_output') {
      const toolName = toolNameOf(messages, item.call_id);
      if (!toolName) throw new ApiError(400, 'invalid_request', `input.${index}.call_id: no function_call item before it has call_id ${item.call_id}`, { field: `input.${index}.call_id` });
      const value = typeof item.output === 'string' ? item.output : item.output.map((part) => (part.type === 'input_text' ? part.text : '')).join('');
      const result: ToolResultPart = { type: 'tool-result', toolCallId: item.call_id, toolName, output: { type: 'text', value } };
      if (last?.role === 'tool') last.content.push(result);
      else messages.push({ role: 'tool', content: [result] });
      return;
    }
    if (typeof item.content === 'string') {
      messages.push({ role: item.role === 'developer' ? 'system' : item.role, content: item.content } as ModelMessage);
      return;
    }
    if (item.role === 'user') {
      const parts: (TextPart | ImagePart)[] = item.content.map((part, at) => {
        const field = `input.${index}.content.${at}`;
        if (part.type === 'input_image') {
          if (!part.image_url) throw new ApiError(400, 'invalid_request', `${field}.image_url: required (file_id needs stored files)`, { field: `${field}.image_url` });
          const { image, mediaType } = imageInput(part.image_url, field);
          imageFields.set(image instanceof URL ? image.href : `inline:${imageFields.size}`, field);
          return { type: 'image', image, ...(mediaType ? { mediaType } : {}) };
        }
        return { type: 'text', text: textOf(part) };
      });
      messages.push({ role: 'user', content: parts });
      return;
    }
    item.content.forEach((part, at) => {
      if (part.type === 'input_image') throw new ApiError(400, 'invalid_request', `input.${index}.content.${at}: images only in user messages`, { field: `input.${index}.content.${at}` });
    });
    const text = item.content.map(textOf).join('');
    messages.push({ role: item.role === 'developer' ? 'system' : item.role, content: text } as ModelMessage);
  });
  if (messages.every((message) => message.role === 'system')) {
    throw new ApiError(400, 'invalid_request', 'input: no user, assistant or tool item to answer', { field: 'input' });
  }
  return { messages, imageFields };
}

function textOf(part: { type: string; text?: string; refusal?: string }): string {
  return part.text ?? part.refusal ?? '';
}

function asParts(content: Extract<ModelMessage, { role: 'assistant' }>['content']): Exclude<typeof content, string> {
  return typeof content === 'string' ? (content ? [{ type: 'text', text: content }] : []) : content;
}
