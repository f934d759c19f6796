// POST /v1/chat/completions: OpenAI's Chat Completions request translated into the gateway's chat call
// (prepareChat: same model, price and provider call as /api/v1/ai/chat), and its answer shaped as OpenAI's,
// whole (chat.completion) or streamed (chat.completion.chunk events, then data: [DONE]).
//
// The stream: a first chunk with the assistant role, one chunk per piece of text or of a tool call (a call's
// first chunk carries its index, id, type and name; the next ones fragments of its arguments, as OpenAI sends them),
// then, once the payment settled, a chunk with finish_reason and (stream_options.include_usage) a chunk
// with usage and empty choices, as OpenAI sends them. The last chunk carries the receipt as `x402`: clients
// that do not know the field ignore it. A stream that stops short ends with data: { error: {...} }, which
// the openai SDK raises as an APIError.
import type { AssistantContent, ModelMessage, UserContent } from 'ai';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { parseToolArguments, toolNameOf, type ChatDelta, type ChatResponseFormat, type ChatTool, type ChatToolChoice } from '../../providers/chat-model.ts';
import { imageDownloader, imageInput } from '../image-input.ts';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, EventStream, PreparedCall, StreamReceipt } from '../endpoint.ts';
import { SSE_DONE, sseData } from '../endpoint.ts';
import { newChatId, prepareChat, type ChatOutcome } from '../chat.ts';
import { parseRequest } from '../validate.ts';
import { RequestNotes } from '../request-notes.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { CHAT_COMPLETIONS_FIELD_RULES, openaiChatRequestSchema, type OpenAIChatRequest, type OpenAIChatResponse, type OpenAIChatTool } from './schemas.ts';
import { openaiErrorBody } from './error-body.ts';
import { withFieldNames } from '../request-fields.ts';
import { chatCall, type StreamedChat } from '../chat-output.ts';
import { fileText } from '../file-input.ts';

export function prepareChatCompletion(body: unknown, context: EndpointContext): PreparedCall {
  const notes = new RequestNotes();
  const request = parseRequest(openaiChatRequestSchema, body, { style: 'brackets', notes, rules: CHAT_COMPLETIONS_FIELD_RULES });
  const { messages, imageFields } = toModelMessages(request.messages, notes);
  const tools = allowedOnly(functionTools(request.tools, notes), request.tool_choice);
  const chat = withFieldNames({ 'options.seed': 'seed', prompt: 'messages' }, () =>
    prepareChat(
      {
        model: request.model,
        messages,
        maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
        temperature: request.temperature ?? undefined,
        topP: request.top_p ?? undefined,
        presencePenalty: request.presence_penalty ?? undefined,
        frequencyPenalty: request.frequency_penalty ?? undefined,
        stop: typeof request.stop === 'string' ? [request.stop] : (request.stop ?? undefined),
        options: request.seed == null ? undefined : { seed: seedIn31Bits(request.seed, notes) },
        tools: tools.map(({ tool }) => tool),
        toolChoice: toolChoiceOf(request.tool_choice, notes),
        parallelToolCalls: request.parallel_tool_calls ?? undefined,
        responseFormat: responseFormatOf(request.response_format),
        stream: request.stream ?? undefined,
        reasoning: request.reasoning_effort ? { effort: request.reasoning_effort } : undefined,
        promptCacheKey: request.prompt_cache_key ?? undefined,
        featureFields: {
          effort: request.reasoning_effort ? ['reasoning_effort'] : [],
          promptCacheKey: request.prompt_cache_key ? ['prompt_cache_key'] : [],
        },
        notes,
        fields: {
          image: imageFields.values().next().value,
          maxTokens: request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens',
          responseSchema: 'response_format.json_schema.schema',
          toolParameters: (index) => tools[index]?.field ?? 'tools',
        },
        download: imageDownloader(context.providers.publicFetch, { fieldOf: (url) => imageFields.get(url.href) }),
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
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // OpenAI answers null content beside tool calls when the model wrote no text
          content: outcome.text.length === 0 && outcome.toolCalls.length > 0 ? null : outcome.text,
          refusal: null,
          ...(outcome.toolCalls.length > 0
            ? { tool_calls: outcome.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
            : {}),
        },
        finish_reason: outcome.finishReason,
      },
    ],
    usage: openaiUsage(outcome.usage),
  });
  return {
    ...chatCall(chat, toBody, request.stream ? (streamed) => chunkEvents(request, { id, created, model: chat.model.id }, streamed) : undefined),
    notes,
  };
}

/** The function tools, each with the field of its schema; a tool of another type is left out and noted. */
function functionTools(tools: readonly OpenAIChatTool[] | undefined, notes: RequestNotes): { tool: ChatTool; field: string }[] {
  const given: { tool: ChatTool; field: string }[] = [];
  (tools ?? []).forEach((tool, index) => {
    if (tool.type !== 'function' || !('function' in tool)) {
      notes.ignore(`tools[${index}]`);
      return;
    }
    const { name, description, parameters, strict } = (tool as Extract<OpenAIChatTool, { function: unknown }>).function;
    given.push({
      tool: { name, description, parameters: (parameters ?? { type: 'object', properties: {} }) as JSONSchema7, strict: strict ?? undefined },
      field: `tools[${index}].function.parameters`,
    });
  });
  return given;
}

/** The tokens an OpenAI chat body reports. */
export function usageOfChatCompletion(body: unknown): TokenUsage | undefined {
  const usage = (body as Partial<OpenAIChatResponse>).usage;
  return usage && { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
}

type OpenAIMessage = OpenAIChatRequest['messages'][number];

const textOf = (content: string | Array<{ text: string } | { refusal: string }>) =>
  typeof content === 'string' ? content : content.map((part) => ('text' in part ? part.text : part.refusal)).join('');

/**
 * OpenAI's messages as the gateway's (chat-model.ts), and where each remote or inline image sits in the
 * request (its URL -> `messages[i].content[j]`), so a refusal or a failed fetch names the part.
 */
function toModelMessages(messages: OpenAIMessage[], notes: RequestNotes): { messages: ModelMessage[]; imageFields: Map<string, string> } {
  const imageFields = new Map<string, string>();
  const converted: ModelMessage[] = [];
  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        converted.push({ role: 'system', content: textOf(message.content) });
        break;
      case 'user': {
        if (typeof message.content === 'string') {
          converted.push({ role: 'user', content: message.content });
          break;
        }
        const parts: UserContent = message.content.map((part, j) => {
          if (part.type === 'text') return { type: 'text', text: part.text };
          const field = `messages[${i}].content[${j}]`;
          if (part.type === 'file') return { type: 'text', text: fileText(part.file, field, notes) };
          const { image, mediaType } = imageInput(part.image_url.url, field);
          imageFields.set(image instanceof URL ? image.href : `inline:${imageFields.size}`, field);
          return { type: 'image', image, ...(mediaType ? { mediaType } : {}) };
        });
        converted.push({ role: 'user', content: parts });
        break;
      }
      case 'assistant': {
        const text = message.content == null ? '' : textOf(message.content);
        if (!message.tool_calls) {
          converted.push({ role: 'assistant', content: text });
          break;
        }
        const parts: AssistantContent = [
          ...(text ? [{ type: 'text' as const, text }] : []),
          ...message.tool_calls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.function.name,
            input: parseToolArguments(call.function.arguments),
          })),
        ];
        converted.push({ role: 'assistant', content: parts });
        break;
      }
      case 'tool': {
        const toolName = toolNameOf(converted, message.tool_call_id);
        if (toolName === undefined) {
          const field = `messages[${i}].tool_call_id`;
          throw new ApiError(400, 'invalid_request', `${field}: ${message.tool_call_id} is not the id of an earlier assistant tool call`, { field });
        }
        converted.push({
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: message.tool_call_id, toolName, output: { type: 'text', value: textOf(message.content) } }],
        });
        break;
      }
    }
  });
  return { messages: converted, imageFields };
}

/** OpenAI takes any 64-bit seed (-1, a random one); the models here take 0 to 2^31-1: the same seed folds to the same one */
function seedIn31Bits(seed: number, notes: RequestNotes): number {
  const RANGE = 2 ** 31;
  if (seed >= 0 && seed < RANGE) return seed;
  const folded = ((seed % RANGE) + RANGE) % RANGE;
  notes.clamp('seed', folded);
  return folded;
}

function toolChoiceOf(choice: OpenAIChatRequest['tool_choice'], notes: RequestNotes): ChatToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  if (choice.type === 'allowed_tools') return choice.allowed_tools.mode;
  if (choice.type === 'custom') {
    notes.ignore('tool_choice'); // custom tools are left out here, as is a choice naming one
    return 'auto';
  }
  return { tool: choice.function.name };
}

/** tool_choice allowed_tools: only the function tools it names are offered */
function allowedOnly<T extends { tool: { name: string } }>(tools: T[], choice: OpenAIChatRequest['tool_choice']): T[] {
  if (typeof choice !== 'object' || choice === null || choice.type !== 'allowed_tools') return tools;
  const allowed = new Set(choice.allowed_tools.tools.map((tool) => tool.function?.name));
  return tools.filter(({ tool }) => allowed.has(tool.name));
}

function responseFormatOf(format: OpenAIChatRequest['response_format']): ChatResponseFormat | undefined {
  if (format?.type !== 'json_schema') return format;
  const { name, description, schema, strict } = format.json_schema;
  // a json_schema without a schema asks only for JSON
  if (!schema) return { type: 'json_object' };
  return { type: 'json_schema', name, description, schema: schema as JSONSchema7, strict: strict ?? undefined };
}

function openaiUsage(usage: TokenUsage): OpenAIChatResponse['usage'] {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedInputTokens !== undefined ? { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } } : {}),
    ...(usage.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } } : {}),
  };
}

interface ChunkHead {
  id: string;
  created: number;
  model: string;
}

function chunkEvents(
  request: OpenAIChatRequest,
  head: ChunkHead,
  stream: StreamedChat,
): EventStream {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sseData({ ...head, object: 'chat.completion.chunk', choices, ...extra });
  const delta = (content: Record<string, unknown>) => chunk([{ index: 0, delta: content, finish_reason: null }]);
  // as OpenAI streams a call: its first delta carries index, id, type and name (arguments empty), then fragments
  const toolDelta = (piece: ChatDelta): string => {
    if (piece.type === 'text') return delta({ content: piece.text });
    // OpenAI's chat completions carry no reasoning
    if (piece.type === 'reasoning') return '';
    if (piece.type === 'tool-call') {
      return delta({ tool_calls: [{ index: piece.index, id: piece.id, type: 'function', function: { name: piece.name, arguments: '' } }] });
    }
    return delta({ tool_calls: [{ index: piece.index, function: { arguments: piece.arguments } }] });
  };
  const includeUsage = request.stream_options?.include_usage === true;
  return {
    run(write, signal) {
      write(delta({ role: 'assistant', content: '' }));
      return stream((piece) => write(toolDelta(piece)), signal);
    },
    end(body, receipt: StreamReceipt, replayed) {
      const result = body as OpenAIChatResponse;
      const [choice] = result.choices;
      let whole = '';
      if (replayed) {
        whole = delta({ role: 'assistant', content: '' });
        if (choice!.message.content) whole += delta({ content: choice!.message.content });
        (choice!.message.tool_calls ?? []).forEach((call, index) => {
          whole += toolDelta({ type: 'tool-call', index, id: call.id, name: call.function.name });
          whole += toolDelta({ type: 'tool-arguments', index, arguments: call.function.arguments });
        });
      }
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
