// POST /v1/chat/completions: OpenAI's Chat Completions request translated into the gateway's chat call
// (prepareChat: same model, price and provider call as /api/v1/ai/chat), and its answer shaped as OpenAI's,
// whole (chat.completion) or streamed (chat.completion.chunk events, then data: [DONE]).
//
// The stream: a first chunk with the assistant role, one chunk per piece of text as the model produces it,
// then, once the payment settled, a chunk with finish_reason and (stream_options.include_usage) a chunk
// with usage and empty choices, as OpenAI sends them. The last chunk carries the receipt as `x402`: clients
// that do not know the field ignore it. A stream that stops short ends with data: { error: {...} }, which
// the openai SDK raises as an APIError.
import type { ModelMessage } from 'ai';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, EventStream, PreparedCall, StreamReceipt } from '../endpoint.ts';
import { SSE_DONE, sseData } from '../endpoint.ts';
import { newChatId, prepareChat, type ChatOutcome } from '../chat.ts';
import { parseOrThrow } from '../validate.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { openaiChatRequestSchema, UNSUPPORTED_CHAT_FIELDS, type OpenAIChatRequest, type OpenAIChatResponse } from './schemas.ts';
import { openaiErrorBody } from './error-body.ts';
import { withFieldNames } from './field-names.ts';
import { chatOutput } from '../chat-output.ts';

export function prepareChatCompletion(body: unknown, context: EndpointContext): PreparedCall {
  refuseUnsupported(body);
  const request = parseOrThrow(openaiChatRequestSchema, body);
  const chat = withFieldNames({ 'options.seed': 'seed' }, () =>
    prepareChat(
      {
        model: request.model,
        messages: request.messages.map(toModelMessage),
        maxTokens: request.max_completion_tokens ?? request.max_tokens,
        temperature: request.temperature,
        topP: request.top_p,
        presencePenalty: request.presence_penalty,
        frequencyPenalty: request.frequency_penalty,
        stop: typeof request.stop === 'string' ? [request.stop] : request.stop,
        options: request.seed === undefined ? undefined : { seed: request.seed },
      },
      context,
    ),
  );
  const id = newChatId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const toBody = (outcome: ChatOutcome): OpenAIChatResponse => ({
    id,
    object: 'chat.completion',
    created,
    model: chat.model.id,
    choices: [{ index: 0, message: { role: 'assistant', content: outcome.text }, finish_reason: finishReason(outcome.finishReason) }],
    usage: openaiUsage(outcome.usage),
  });
  return {
    model: chat.model,
    amount: chat.amount,
    async run() {
      const outcome = await chat.complete();
      return chatOutput(outcome, toBody);
    },
    ...(request.stream
      ? {
          events: chunkEvents(request, { id, created, model: chat.model.id }, async (write, signal) => {
            const outcome = await chat.stream(write, signal);
            return chatOutput(outcome, toBody);
          }),
        }
      : {}),
  };
}

/** The tokens an OpenAI chat body reports. */
export function usageOfChatCompletion(body: unknown): TokenUsage | undefined {
  const usage = (body as Partial<OpenAIChatResponse>).usage;
  return usage && { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
}

/** Fields OpenAI accepts that this gateway cannot honour, named in a 400 before any price is quoted. */
function refuseUnsupported(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const fields = body as Record<string, unknown>;
  for (const field of UNSUPPORTED_CHAT_FIELDS) {
    const value = fields[field];
    if (value === undefined || value === null || value === false) continue;
    if (field === 'modalities' && Array.isArray(value) && value.every((m) => m === 'text')) continue;
    throw new ApiError(400, 'invalid_request', `${field}: not supported by this gateway (text chat completions only)`, { field });
  }
  if (typeof fields.n === 'number' && fields.n > 1) throw new ApiError(400, 'invalid_request', 'n: only one choice per request (n = 1)', { field: 'n' });
  const format = fields.response_format as { type?: unknown } | undefined;
  if (format && typeof format === 'object' && format.type !== 'text') {
    throw new ApiError(400, 'invalid_request', `response_format: ${String(format.type)} is not supported; the models here answer in free text`, {
      field: 'response_format',
    });
  }
}

function toModelMessage(message: OpenAIChatRequest['messages'][number]): ModelMessage {
  const content = typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('');
  const role = message.role === 'developer' ? 'system' : message.role;
  return { role, content } as ModelMessage;
}

/** OpenAI's finish reasons from the AI SDK's unified ones. */
function finishReason(unified: string): string {
  if (unified === 'length') return 'length';
  if (unified === 'content-filter') return 'content_filter';
  return 'stop';
}

function openaiUsage(usage: TokenUsage): OpenAIChatResponse['usage'] {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens };
}

interface ChunkHead {
  id: string;
  created: number;
  model: string;
}

function chunkEvents(
  request: OpenAIChatRequest,
  head: ChunkHead,
  stream: (onText: (delta: string) => void, signal: AbortSignal) => ReturnType<EventStream['run']>,
): EventStream {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sseData({ ...head, object: 'chat.completion.chunk', choices, ...extra });
  const delta = (content: Record<string, string>) => chunk([{ index: 0, delta: content, finish_reason: null }]);
  const includeUsage = request.stream_options?.include_usage === true;
  return {
    run(write, signal) {
      write(delta({ role: 'assistant', content: '' }));
      return stream((text) => write(delta({ content: text })), signal);
    },
    end(body, receipt: StreamReceipt, replayed) {
      const result = body as OpenAIChatResponse;
      const [choice] = result.choices;
      const whole = replayed ? `${delta({ role: 'assistant', content: '' })}${delta({ content: choice!.message.content })}` : '';
      const finish = [{ index: 0, delta: {}, finish_reason: choice!.finish_reason }];
      const closing = includeUsage
        ? `${chunk(finish)}${chunk([], { usage: result.usage, x402: receipt })}`
        : chunk(finish, { x402: receipt });
      return `${whole}${closing}${SSE_DONE}`;
    },
    failure({ status, code, message }) {
      return sseData(openaiErrorBody(status, code, message, undefined));
    },
  };
}
