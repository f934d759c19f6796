// POST /v1/messages: Anthropic's Messages request translated into the gateway's chat call (prepareChat: same
// model, price, payment and provider call as /v1/chat/completions), and its answer shaped as Anthropic's
// `message`, whole or streamed (message-events.ts).
//
// What Claude Code and the Anthropic SDKs send by default is taken: system blocks and system turns mid-conversation,
// each cache_control mark (handed to an Anthropic-protocol upstream as given, where the prompt cache is), thinking
// and output_config.effort (handed to models that think; ignored, and said so, elsewhere), context_management,
// structured output (output_config.format), earlier thinking blocks with their signatures. Tools Anthropic runs
// itself (web search, ...) are left out and named in X-Ignored-Fields.
import type { AssistantContent, ImagePart, ModelMessage, TextPart, ToolResultPart } from 'ai';
import type { JSONSchema7, JSONValue, SharedV4ProviderOptions } from '@ai-sdk/provider';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { newChatId, prepareChat, TOOL_RESULT_IMAGE, type ChatOutcome } from '../chat.ts';
import { parseRequest } from '../validate.ts';
import { chatCall } from '../chat-output.ts';
import { parseToolArguments, toolNameOf, type ChatFinishReason, type ChatReasoning, type ChatTool, type ChatToolChoice } from '../../providers/chat-model.ts';
import { imageDownloader, imageInput } from '../image-input.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { withFieldNames } from '../request-fields.ts';
import { RequestNotes } from '../request-notes.ts';
import { messagesEvents } from './message-events.ts';
import {
  MESSAGES_FIELD_RULES,
  SERVER_TOOL_BLOCKS,
  messagesRequestSchema,
  type AnthropicContentBlock,
  type AnthropicTool,
  type CustomTool,
  type MessagesRequest,
  type MessagesResponse,
  type ResponseBlock,
} from './schemas.ts';

export function prepareMessage(body: unknown, context: EndpointContext): PreparedCall {
  const notes = new RequestNotes();
  const request = parseRequest(messagesRequestSchema, body, { style: 'dots', notes, rules: MESSAGES_FIELD_RULES });
  const cacheFields: string[] = [];
  const { messages, imageFields } = toMessages(request, cacheFields, notes);
  const tools = toolsOf(request.tools, notes, cacheFields);
  const format = request.output_config?.format ?? request.output_format;
  const thinking = request.thinking && request.thinking.type !== 'disabled' && request.thinking.type !== 'between_tools';
  if (request.thinking?.type === 'between_tools') notes.ignore('thinking');
  const chat = withFieldNames({ prompt: 'messages' }, () =>
    prepareChat(
      {
        model: request.model,
        messages,
        maxTokens: request.max_tokens,
        temperature: request.temperature ?? undefined,
        topP: request.top_p ?? undefined,
        // 0 or less (LangChain's -1): not restricted
        topK: request.top_k && request.top_k > 0 ? request.top_k : undefined,
        stop: request.stop_sequences ?? undefined,
        tools: tools.map(({ tool }) => tool),
        toolChoice: toolChoice(request.tool_choice),
        parallelToolCalls: request.tool_choice && 'disable_parallel_tool_use' in request.tool_choice && request.tool_choice.disable_parallel_tool_use ? false : undefined,
        responseFormat: format ? { type: 'json_schema', name: 'output', schema: format.schema as JSONSchema7 } : undefined,
        stream: request.stream,
        reasoning: reasoningOf(request, notes),
        contextManagement: contextManagementOf(request.context_management, notes),
        featureFields: {
          cacheControl: cacheFields,
          thinking: thinking ? ['thinking'] : [],
          effort: request.output_config?.effort ? ['output_config.effort'] : [],
          contextManagement: request.context_management ? ['context_management'] : [],
        },
        notes,
        fields: {
          tools: 'tools',
          toolChoice: 'tool_choice',
          stream: 'stream',
          responseFormat: 'output_config.format',
          responseSchema: 'output_config.format.schema',
          maxTokens: 'max_tokens',
          image: imageFields.values().next().value,
          toolParameters: (index) => tools[index]?.field ?? 'tools',
        },
        download: imageDownloader(context.providers.publicFetch, { fieldOf: (url) => imageFields.get(url.href) }),
      },
      context,
    ),
  );
  const id = newChatId('msg_');
  const message = (content: ResponseBlock[], stopReason: MessagesResponse['stop_reason'] | null, usage: MessagesResponse['usage'], stopSequence: string | null = null): MessagesResponse =>
    ({ id, type: 'message', role: 'assistant', model: chat.model.id, content, stop_reason: stopReason, stop_sequence: stopSequence, usage }) as MessagesResponse;
  const toBody = (outcome: ChatOutcome): MessagesResponse => {
    const content: ResponseBlock[] = outcome.reasoning.map(thinkingBlock);
    if (outcome.text.length > 0) content.push({ type: 'text', text: outcome.text });
    for (const call of outcome.toolCalls) content.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: toolInput(call.arguments) });
    if (outcome.stopSequence) return message(content, 'stop_sequence', anthropicUsage(outcome.usage), outcome.stopSequence);
    return message(content, stopReason(outcome.finishReason), anthropicUsage(outcome.usage));
  };
  return {
    ...chatCall(
      chat,
      toBody,
      request.stream ? (run) => messagesEvents({ pending: message([], null, { input_tokens: 0, output_tokens: 0 }), toolUseId, run }) : undefined,
    ),
    notes,
  };
}

/** The tokens a Messages body reports (the usage headers of a replay). */
export function usageOfMessage(body: unknown): Partial<TokenUsage> | undefined {
  const usage = (body as Partial<MessagesResponse>).usage;
  if (!usage) return undefined;
  const promptTokens = usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
  return { promptTokens, completionTokens: usage.output_tokens, totalTokens: promptTokens + usage.output_tokens };
}

/** A thinking part of the answer as Anthropic's block: redacted, or its text (empty when withheld) and signature. */
export function thinkingBlock(part: ChatOutcome['reasoning'][number]): ResponseBlock {
  if (part.redacted !== undefined) return { type: 'redacted_thinking', data: part.redacted };
  return { type: 'thinking', thinking: part.text, signature: part.signature ?? '' };
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

/** Anthropic counts cache reads and writes apart from input_tokens; the gateway's prompt tokens include both. */
function anthropicUsage(usage: TokenUsage): MessagesResponse['usage'] {
  const read = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: usage.promptTokens - read - written,
    output_tokens: usage.completionTokens,
    ...(usage.cacheWriteInputTokens !== undefined ? { cache_creation_input_tokens: written } : {}),
    ...(usage.cachedInputTokens !== undefined ? { cache_read_input_tokens: read } : {}),
  };
}

function toolChoice(choice: MessagesRequest['tool_choice']): ChatToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool') return { tool: choice.name };
  return choice.type;
}

/** the thinking displays an upstream takes */
const DISPLAYS = new Set(['summarized', 'omitted']);

function reasoningOf(request: MessagesRequest, notes: RequestNotes): ChatReasoning | undefined {
  const thinking = request.thinking?.type === 'between_tools' ? undefined : request.thinking;
  const effort = request.output_config?.effort;
  if (!thinking && !effort) return undefined;
  const display = thinking && 'display' in thinking ? thinking.display : undefined;
  if (display && !DISPLAYS.has(display)) notes.ignore('thinking.display');
  return {
    ...(effort ? { effort } : {}),
    ...(thinking?.type === 'enabled' ? { thinking: { type: 'enabled', budgetTokens: thinking.budget_tokens } } : thinking ? { thinking: { type: thinking.type } } : {}),
    ...(display && DISPLAYS.has(display) ? { display: display as 'summarized' | 'omitted' } : {}),
  };
}

/** context_management edits an Anthropic upstream takes, in @ai-sdk/anthropic's words; any other is noted as ignored. */
const CONTEXT_EDITS = new Set(['clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112']);

function contextManagementOf(management: MessagesRequest['context_management'], notes: RequestNotes): JSONValue | undefined {
  if (!management) return undefined;
  const edits = management.edits.flatMap((edit, index) => {
    if (!CONTEXT_EDITS.has(edit.type)) {
      notes.ignore(`context_management.edits.${index}`);
      return [];
    }
    return [Object.fromEntries(Object.entries(edit).map(([key, value]) => [key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()), value])) as JSONValue];
  });
  return edits.length > 0 ? { edits } : undefined;
}

/** `cache_control` as the provider options that carry it to an Anthropic upstream; its field noted. */
function cacheOptions(mark: { type: 'ephemeral'; ttl?: '5m' | '1h' | undefined } | null | undefined, field: string, cacheFields: string[]): { providerOptions?: SharedV4ProviderOptions } {
  if (!mark) return {};
  cacheFields.push(`${field}.cache_control`);
  return { providerOptions: { anthropic: { cacheControl: mark } } };
}

/**
 * The tools the model is given, each with the field of its schema: custom tools; a tool Anthropic defines or
 * runs itself (web_search_*, bash_*, ...) is left out and noted.
 */
function toolsOf(tools: readonly AnthropicTool[] | undefined, notes: RequestNotes, cacheFields: string[]): { tool: ChatTool; field: string }[] {
  const given: { tool: ChatTool; field: string }[] = [];
  (tools ?? []).forEach((tool, index) => {
    if (!isCustomTool(tool)) {
      notes.ignore(`tools.${index}`);
      return;
    }
    // every tool is loaded up front, and tool input always streams as the model writes it
    if (tool.defer_loading) notes.ignore(`tools.${index}.defer_loading`);
    if (tool.eager_input_streaming === false) notes.ignore(`tools.${index}.eager_input_streaming`);
    given.push({
      tool: {
        name: tool.name,
        description: tool.description,
        parameters: tool.input_schema as JSONSchema7,
        strict: tool.strict,
        ...cacheOptions(tool.cache_control, `tools.${index}`, cacheFields),
      },
      field: `tools.${index}.input_schema`,
    });
  });
  return given;
}

function isCustomTool(tool: AnthropicTool): tool is CustomTool {
  return tool.type === undefined || tool.type === null || tool.type === 'custom';
}

export function systemText(system: MessagesRequest['system']): string | undefined {
  if (system === undefined) return undefined;
  return typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
}

/** System text blocks as system messages, one a block, each carrying its cache_control. */
function systemMessages(system: MessagesRequest['system'], field: string, cacheFields: string[]): ModelMessage[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system ? [{ role: 'system', content: system }] : [];
  return system.map((block, at) => ({ role: 'system', content: block.text, ...cacheOptions(block.cache_control, `${field}.${at}`, cacheFields) }));
}

/**
 * system first (one system message a block), then the turns: a system turn mid-conversation stays where it is.
 * An Anthropic user turn may open with tool_result blocks: they become a tool turn before the rest of it.
 * `imageFields` names where each image sits (by its URL; inline ones by their order), for the 400 of a model
 * without vision and of an image that cannot be fetched. Each cache_control mark rides on its part.
 */
function toMessages(request: MessagesRequest, cacheFields: string[], notes: RequestNotes): { messages: ModelMessage[]; imageFields: Map<string, string> } {
  const messages: ModelMessage[] = systemMessages(request.system, 'system', cacheFields);
  const imageFields = new Map<string, string>();
  request.messages.forEach((turn, index) => {
    if (turn.role === 'system') {
      const blocks = typeof turn.content === 'string' ? turn.content : turn.content.map((block, at) => textOnly(block, `messages.${index}.content.${at}`, 'system turns'));
      messages.push(...systemMessages(blocks, `messages.${index}.content`, cacheFields));
      return;
    }
    if (typeof turn.content === 'string') {
      messages.push({ role: turn.role, content: turn.content });
      return;
    }
    const results: ToolResultPart[] = [];
    const user: (TextPart | ImagePart)[] = [];
    const assistant: Exclude<AssistantContent, string> = [];
    turn.content.forEach((block, at) => {
      const field = `messages.${index}.content.${at}`;
      const refuse = (why: string) => {
        throw new ApiError(400, 'invalid_request', `${field}: ${why}`, { field });
      };
      if ((SERVER_TOOL_BLOCKS as readonly string[]).includes(block.type)) {
        notes.ignore(field); // a tool Anthropic ran in an earlier answer: nothing a model here can be handed
        return;
      }
      const cache = 'cache_control' in block ? cacheOptions(block.cache_control, field, cacheFields) : {};
      if (block.type === 'text' || block.type === 'document' || block.type === 'search_result') {
        (turn.role === 'user' ? user : assistant).push({ type: 'text', text: blockText(block, field, notes), ...cache });
      } else if (block.type === 'image') {
        if (turn.role !== 'user') refuse('images only in user turns');
        const url = block.source.type === 'base64' ? `data:${block.source.media_type};base64,${block.source.data}` : block.source.url;
        const { image, mediaType } = imageInput(url, field);
        imageFields.set(image instanceof URL ? image.href : `inline:${imageFields.size}`, field);
        user.push({ type: 'image', image, ...(mediaType ? { mediaType } : {}), ...cache });
      } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
        if (turn.role !== 'assistant') refuse(`${block.type} blocks only in assistant turns`);
        const handBack = block.type === 'thinking' ? { signature: block.signature ?? '' } : { redactedData: block.data };
        assistant.push({ type: 'reasoning', text: block.type === 'thinking' ? block.thinking : '', providerOptions: { anthropic: handBack } });
      } else if (block.type === 'tool_use') {
        if (turn.role !== 'assistant') refuse('tool_use blocks only in assistant turns');
        assistant.push({ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input, ...cache });
      } else if (block.type === 'tool_result') {
        if (turn.role !== 'user') refuse('tool_result blocks only in user turns');
        const toolName = toolNameOf(messages, block.tool_use_id);
        if (!toolName) refuse(`tool_use_id ${block.tool_use_id} answers no tool_use block of an earlier assistant turn`);
        const value = toolResultText(block.content, field, notes);
        results.push({ type: 'tool-result', toolCallId: block.tool_use_id, toolName: toolName!, output: { type: block.is_error ? 'error-text' : 'text', value }, ...cache });
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

/** A block where only text is taken (a system turn, a tool result), or a 400 naming it. */
function textOnly<B extends { type: string }>(block: B, field: string, where: string): Extract<B, { type: 'text' }> {
  if (block.type !== 'text') throw new ApiError(400, 'invalid_request', `${field}: ${where} hold text blocks here, not ${block.type}`, { field });
  return block as Extract<B, { type: 'text' }>;
}

/**
 * A tool result as the text the model reads. An image in it (Claude Code reading a screenshot) is not passed to a
 * model here: it is said in its place, and the block named in X-Ignored-Fields, so the session goes on.
 */
function toolResultText(content: Extract<AnthropicContentBlock, { type: 'tool_result' }>['content'], field: string, notes: RequestNotes): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((block, at) => {
      if (block.type !== 'image') return blockText(block, `${field}.content.${at}`, notes);
      notes.ignore(`${field}.content.${at}`);
      return TOOL_RESULT_IMAGE;
    })
    .join('');
}

type TextLike = Extract<AnthropicContentBlock, { type: 'text' | 'document' | 'search_result' }> | { type: 'tool_reference'; tool_name: string };

/**
 * What a model reads of a block that holds text: a text block without its citations (named), a plain-text document,
 * a search result's title, source and text, a tool reference's name. A PDF or a document by URL is not read by a
 * model here: a sentence says it was there, and it is named.
 */
function blockText(block: TextLike, field: string, notes: RequestNotes): string {
  switch (block.type) {
    case 'text':
      if (block.citations?.length) notes.ignore(`${field}.citations`);
      return block.text;
    case 'document': {
      const { source } = block;
      const text = source.type === 'text' ? source.data : source.type === 'content' ? contentText(source.content) : undefined;
      if (typeof text === 'string') return block.title ? `${block.title}\n${text}` : text;
      notes.ignore(field);
      return `[a document (${source.type}) that is not passed to the model here]`;
    }
    case 'search_result':
      return [block.title, block.source, ...(block.content ?? []).map((part) => part.text ?? '')].filter(Boolean).join('\n');
    case 'tool_reference':
      return `[tool ${block.tool_name}]`;
  }
}

/** a document's `content` source: a string or text blocks */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content.map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
}
