// POST /v1/responses: OpenAI's Responses API request translated into the gateway's chat call (prepareChat:
// same model, price, payment and provider call as /v1/chat/completions), and its answer shaped as a Responses
// `response` object, whole or streamed (responses-events.ts).
//
// Stateless: nothing is stored, so the answer always says `store: false`, and the fields that need stored
// state (previous_response_id, conversation, prompt, background, ...) are a 400 naming the field before any
// price. A conversation is sent whole as input items, as a stateless client of the Responses API does.
import type { ModelMessage } from 'ai';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { newChatId, prepareChat, type ChatOutcome } from '../chat.ts';
import { parseOrThrow } from '../validate.ts';
import { chatOutput } from '../chat-output.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { withFieldNames } from './field-names.ts';
import { responsesEvents } from './responses-events.ts';
import {
  REFUSED_RESPONSES_FIELDS,
  responsesRequestSchema,
  type OutputItem,
  type ResponsesInputItem,
  type ResponsesRequest,
  type ResponsesResponse,
} from './responses-schemas.ts';

export function prepareResponse(body: unknown, context: EndpointContext): PreparedCall {
  refuseStoredState(body);
  const request = parseOrThrow(responsesRequestSchema, body);
  refuseUnsupported(request);
  const chat = withFieldNames({ max_tokens: 'max_output_tokens', prompt: 'input' }, () =>
    prepareChat(
      {
        model: request.model,
        messages: toMessages(request),
        maxTokens: request.max_output_tokens ?? undefined,
        temperature: request.temperature ?? undefined,
        topP: request.top_p ?? undefined,
      },
      context,
    ),
  );
  const id = newChatId('resp_');
  const messageId = newChatId('msg_');
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
      output.push({
        type: 'message',
        id: messageId,
        status,
        role: 'assistant',
        content: [{ type: 'output_text', text: outcome.text, annotations: [], logprobs: [] }],
      });
    }
    return response(status, output, responsesUsage(outcome.usage), cut ? 'max_output_tokens' : undefined);
  };
  return {
    model: chat.model,
    amount: chat.amount,
    async run() {
      return chatOutput(await chat.complete(), toBody);
    },
    ...(request.stream
      ? {
          events: responsesEvents({
            pending: response('in_progress', [], null),
            messageId,
            run: async (onText, signal) => chatOutput(await chat.stream(onText, signal), toBody),
          }),
        }
      : {}),
  };
}

/** The tokens a Responses body reports (the usage headers of a replay). */
export function usageOfResponse(body: unknown): Partial<TokenUsage> | undefined {
  const usage = (body as Partial<ResponsesResponse>).usage;
  return usage ? { promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, totalTokens: usage.total_tokens } : undefined;
}

function responsesUsage(usage: TokenUsage): ResponsesResponse['usage'] {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.totalTokens,
  };
}

/** Stored-state fields are named before the body is even validated: they are the likeliest surprise. */
function refuseStoredState(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  for (const [field, why] of Object.entries(REFUSED_RESPONSES_FIELDS)) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined || value === null || value === false) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
  }
}

/** What the models here cannot honour yet (tools, images, structured output): a 400 naming the field. */
function refuseUnsupported(request: ResponsesRequest): void {
  if (request.tools && request.tools.length > 0) throw unsupported('tools', 'function tools are not supported by this model');
  const format = request.text?.format?.type;
  if (format && format !== 'text') throw unsupported('text.format', `${format} is not supported; the models here answer in free text`);
  if (Array.isArray(request.input)) {
    request.input.forEach((item, index) => {
      if (item.type === 'function_call' || item.type === 'function_call_output') throw unsupported(`input.${index}`, `${item.type} items need tools`);
      if (typeof item.content === 'string') return;
      item.content.forEach((part, at) => {
        if (part.type === 'input_image') throw unsupported(`input.${index}.content.${at}`, 'images are not supported by this model');
      });
    });
  }
}

function unsupported(field: string, why: string): ApiError {
  return new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
}

/** instructions first (a system message), then the input: a string is one user message. */
function toMessages(request: ResponsesRequest): ModelMessage[] {
  const messages: ModelMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  if (typeof request.input === 'string') return [...messages, { role: 'user', content: request.input }];
  for (const item of request.input) messages.push(toMessage(item));
  return messages;
}

function toMessage(item: ResponsesInputItem): ModelMessage {
  if (item.type === 'function_call' || item.type === 'function_call_output') throw unsupported('input', `${item.type} items need tools`);
  const content = typeof item.content === 'string' ? item.content : item.content.map((part) => ('text' in part ? part.text : '')).join('');
  const role = item.role === 'developer' ? 'system' : item.role;
  return { role, content } as ModelMessage;
}
