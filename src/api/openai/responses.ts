// POST /v1/responses: OpenAI's Responses API request translated into the gateway's chat call (prepareChat:
// same model, price, payment and provider call as /v1/chat/completions), and its answer shaped as a Responses
// `response` object, whole or streamed (responses-events.ts).
//
// A conversation is sent whole as input items, as a stateless client of the Responses API (Codex) does: messages,
// the model's earlier calls (function, custom, tool_search) and reasoning, and the client's outputs. An answer asked
// with `store` not false is kept an hour by this instance (kept-items.ts): an `item_reference` to one of its output
// items is resolved, and `previous_response_id` naming it goes on with its conversation. The fields that need state
// kept longer (conversation, prompt, background) are a 400 naming the field before any price.
// Codex's tool kinds are translated by responses-tools.ts.
import type { AssistantContent, ModelMessage, TextPart, ImagePart, ToolResultPart } from 'ai';
import type { JSONSchema7, SharedV4ProviderOptions } from '@ai-sdk/provider';
import { ApiError } from '../../errors.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { newChatId, prepareChat, TOOL_RESULT_IMAGE, type ChatOutcome } from '../chat.ts';
import { parseToolArguments, toolNameOf, type ChatReasoningPart, type ChatResponseFormat, type ChatToolChoice } from '../../providers/chat-model.ts';
import { parseRequest } from '../validate.ts';
import { chatCall } from '../chat-output.ts';
import { imageDownloader, imageInput } from '../image-input.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { withFieldNames } from '../request-fields.ts';
import { RequestNotes } from '../request-notes.ts';
import { responsesEvents } from './responses-events.ts';
import { ResponsesToolset } from './responses-tools.ts';
import {
  RESPONSES_FIELD_RULES,
  responsesRequestSchema,
  type OutputItem,
  type OutputReasoning,
  type ResponsesInputItem,
  FOREIGN_ITEMS,
  type ResponsesRequest,
  type ResponsesResponse,
} from './responses-schemas.ts';
import { KEPT_MS, keptConversations, keptItems, type KeptById, type PaidFor } from './kept-items.ts';
import { sameAddress } from '../../lib/same-address.ts';
import { fileText } from '../file-input.ts';

const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

export function prepareResponse(body: unknown, context: EndpointContext): PreparedCall {
  const notes = new RequestNotes();
  const request = parseRequest(responsesRequestSchema, body, { style: 'brackets', notes, rules: RESPONSES_FIELD_RULES });
  const toolset = new ResponsesToolset(notes);
  toolset.add(request.tools ?? [], 'tools');
  // what earlier answers left and this call names: whoever paid for them alone may pay for this call
  const owners: Owner[] = [];
  const earlier = request.previous_response_id ? conversationOf(request.previous_response_id, owners) : [];
  const conversation = [...earlier, ...inputItems(request.input, owners)];
  const payer = onePayer(owners);
  const { messages, imageFields } = toMessages(request.instructions, conversation, earlier.length, toolset, notes);
  const stored = request.store !== false;
  let keptAs: string | undefined; // who paid for this answer (paidBy), as whose it is kept
  const include = request.include ?? [];
  include.forEach((value, index) => value !== ENCRYPTED_REASONING && notes.ignore(`include[${index}]`));
  const reasoning = request.reasoning ?? undefined;
  const offered = allowedOnly(toolset, request.tool_choice);
  const chat = withFieldNames({ max_tokens: 'max_output_tokens', prompt: 'input' }, () =>
    prepareChat(
      {
        model: request.model,
        messages,
        maxTokens: request.max_output_tokens ?? undefined,
        temperature: request.temperature ?? undefined,
        topP: request.top_p ?? undefined,
        tools: offered.map(({ tool }) => tool),
        toolChoice: toolChoice(request.tool_choice, toolset, notes),
        parallelToolCalls: request.parallel_tool_calls ?? undefined,
        responseFormat: responseFormat(request.text?.format),
        stream: request.stream ?? undefined,
        reasoning: reasoning?.effort ? { effort: reasoning.effort } : undefined,
        promptCacheKey: request.prompt_cache_key ?? undefined,
        featureFields: {
          effort: reasoning?.effort ? ['reasoning.effort'] : [],
          thinking: include.includes(ENCRYPTED_REASONING) ? ['include'] : [],
          promptCacheKey: request.prompt_cache_key ? ['prompt_cache_key'] : [],
        },
        notes,
        fields: {
          tools: 'tools',
          toolChoice: 'tool_choice',
          responseFormat: 'text.format',
          responseSchema: 'text.format.schema',
          stream: 'stream',
          maxTokens: 'max_output_tokens',
          image: imageFields.values().next().value,
          toolParameters: (index) => offered[index]?.field ?? 'tools',
        },
        download: imageDownloader(context.providers.publicFetch, { fieldOf: (url) => imageFields.get(url.href) }),
      },
      context,
    ),
  );
  const id = newChatId('resp_');
  const base = id.slice(5);
  // item ids from the response's: the streamed items and the final body name the same items
  const messageId = `msg_${base}`;
  const callItemId = (index: number, name: string) => `${CALL_ITEM_PREFIX[toolset.kindOf(name)]}_${base}_${index}`;
  const reasoningItemId = (index: number) => `rs_${base}_${index}`;
  const withEncrypted = include.includes(ENCRYPTED_REASONING);
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
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null },
    store: stored,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage,
    user: null,
    metadata: request.metadata ?? {},
  });
  const reasoningItem = (part: ChatReasoningPart, index: number): OutputReasoning => ({
    type: 'reasoning',
    id: reasoningItemId(index),
    summary: part.text ? [{ type: 'summary_text', text: part.text }] : [],
    ...(withEncrypted && (part.signature || part.redacted) ? { encrypted_content: encryptedContent(part) } : {}),
    status: 'completed',
  });
  const toBody = (outcome: ChatOutcome): ResponsesResponse => {
    const cut = outcome.finishReason === 'length';
    const status = cut ? 'incomplete' : 'completed';
    const output: OutputItem[] = outcome.reasoning.map(reasoningItem);
    if (outcome.text.length > 0) {
      output.push({ type: 'message', id: messageId, status, role: 'assistant', content: [{ type: 'output_text', text: outcome.text, annotations: [], logprobs: [] }] });
    }
    outcome.toolCalls.forEach((call, index) => output.push(toolset.callItem(call, callItemId(index, call.name))));
    // kept only as someone's: a payment whose payer is not known (a facilitator that does not say) keeps nothing
    if (stored && keptAs) {
      const owner = keptAs;
      for (const item of output) keptItems.keep(item.id, { value: item, payer: owner });
      keptConversations.keep(id, { value: [...conversation, ...(output as ConversationItem[])], payer: owner });
    }
    return response(status, output, responsesUsage(outcome.usage), cut ? 'max_output_tokens' : undefined);
  };
  return {
    ...chatCall(
      chat,
      toBody,
      request.stream
        ? (run) => responsesEvents({ pending: response('in_progress', [], null), messageId, callItemId, reasoningItem, callItem: (call, itemId) => toolset.callItem(call, itemId), run })
        : undefined,
    ),
    notes,
    payer,
    paidBy: (paying) => (keptAs = paying),
  };
}

/** the id prefix of each kind of call item, as OpenAI's */
const CALL_ITEM_PREFIX = { function: 'fc', custom: 'ctc', tool_search: 'tsc' } as const;

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
 * What a reasoning item's encrypted_content holds: what the provider needs to be handed the reasoning back (an
 * Anthropic signature or redacted thinking), opaque to the client, read back by handBackOf.
 */
function encryptedContent(part: ChatReasoningPart): string {
  return part.redacted !== undefined ? `redacted:${part.redacted}` : `signature:${part.signature}`;
}

/** A reasoning item handed back: the provider options that give the model its reasoning again. */
function handBackOf(encrypted: string | null | undefined, itemId: string | undefined): SharedV4ProviderOptions | undefined {
  if (!encrypted) return undefined;
  if (encrypted.startsWith('signature:')) return { anthropic: { signature: encrypted.slice('signature:'.length) } };
  if (encrypted.startsWith('redacted:')) return { anthropic: { redactedData: encrypted.slice('redacted:'.length) } };
  return { openai: { itemId: itemId ?? null, reasoningEncryptedContent: encrypted } };
}

function toolChoice(choice: ResponsesRequest['tool_choice'], toolset: ResponsesToolset, notes: RequestNotes): ChatToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  if (choice.type === 'allowed_tools') return choice.mode as 'auto' | 'required';
  if (choice.type !== 'function' && choice.type !== 'custom') {
    notes.ignore('tool_choice'); // a tool OpenAI runs: left out here, as is a choice naming it
    return 'auto';
  }
  return { tool: toolset.modelName(choice.name as string, choice.namespace as string | undefined) };
}

/** tool_choice allowed_tools: only the tools it names are offered */
function allowedOnly(toolset: ResponsesToolset, choice: ResponsesRequest['tool_choice']) {
  if (typeof choice !== 'object' || choice === null || choice.type !== 'allowed_tools') return toolset.offered;
  const tools = choice.tools as { name?: string; namespace?: string }[];
  const allowed = new Set(tools.map((tool) => (tool.name ? toolset.modelName(tool.name, tool.namespace) : undefined)));
  return toolset.offered.filter(({ tool }) => allowed.has(tool.name));
}

function responseFormat(format: NonNullable<ResponsesRequest['text']>['format']): ChatResponseFormat | undefined {
  if (!format || format.type !== 'json_schema') return format;
  return { type: 'json_schema', name: format.name, description: format.description, schema: format.schema as JSONSchema7, strict: format.strict ?? undefined };
}

/** An input item as the conversation holds it: item references resolved. */
type ConversationItem = Exclude<ResponsesInputItem, { type: 'item_reference' }>;

/** Who paid for a kept answer a call names, and the field that names it. */
interface Owner {
  payer: string;
  field: string;
}

/** The request's input as items: a string is one user message; an item_reference becomes the item it names. */
function inputItems(input: ResponsesRequest['input'], owners: Owner[]): ConversationItem[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return input.map((item, index) => (item.type === 'item_reference' ? referenced(item.id, index, owners) : item));
}

/** The one payer of every kept answer named, if any; answers of several payers cannot go on in one call (a 400). */
function onePayer(owners: readonly Owner[]): string | undefined {
  const [first, ...others] = owners;
  const other = others.find(({ payer }) => !sameAddress(first!.payer, payer));
  if (other) {
    throw new ApiError(400, 'invalid_request', `${other.field}: paid for by another payer than ${first!.field}; a call goes on from one payer's answers only`, { field: other.field });
  }
  return first?.payer;
}

/**
 * instructions first (a system message), then the conversation: the `earlier` items of a previous response's,
 * then the request's input, its field names counted from there. The model's reasoning and calls become one
 * assistant turn (with the assistant text before them), consecutive outputs one tool turn. Tools declared in the
 * input (additional_tools, a tool_search's output) join the toolset. `imageFields` names where each image sits (by
 * its URL; inline ones by their order), for the 400 of a model without vision and of an image that cannot be fetched.
 */
function toMessages(
  instructions: string | null | undefined,
  conversation: readonly ConversationItem[],
  earlier: number,
  toolset: ResponsesToolset,
  notes: RequestNotes,
): { messages: ModelMessage[]; imageFields: Map<string, string> } {
  const messages: ModelMessage[] = [];
  const imageFields = new Map<string, string>();
  if (instructions) messages.push({ role: 'system', content: instructions });
  const fieldOf = (index: number) => (index < earlier ? 'previous_response_id' : `input[${index - earlier}]`);
  const assistantPart = (part: Exclude<AssistantContent, string>[number]) => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.content = [...asParts(last.content), part];
    else messages.push({ role: 'assistant', content: [part] });
  };
  const toolResult = (callId: string, output: Extract<ResponsesInputItem, { type: 'function_call_output' }>['output'], index: number) => {
    const toolName = toolNameOf(messages, callId);
    const field = `${fieldOf(index)}.call_id`;
    if (!toolName) throw new ApiError(400, 'invalid_request', `${field}: no call item before it has call_id ${callId}`, { field });
    const result: ToolResultPart = { type: 'tool-result', toolCallId: callId, toolName, output: { type: 'text', value: outputText(output, `${fieldOf(index)}.output`, notes) } };
    const last = messages.at(-1);
    if (last?.role === 'tool') last.content.push(result);
    else messages.push({ role: 'tool', content: [result] });
  };
  conversation.forEach((item, index) => {
    if (isForeign(item)) {
      if (index >= earlier) notes.ignore(fieldOf(index));
      return;
    }
    switch (item.type) {
      case 'function_call':
        assistantPart({ type: 'tool-call', toolCallId: item.call_id, toolName: toolset.modelName(item.name, item.namespace), input: parseToolArguments(item.arguments) });
        return;
      case 'custom_tool_call':
        assistantPart({ type: 'tool-call', toolCallId: item.call_id, toolName: toolset.modelName(item.name, item.namespace), input: { input: item.input } });
        return;
      case 'tool_search_call':
        assistantPart({ type: 'tool-call', toolCallId: item.call_id, toolName: 'tool_search', input: item.arguments ?? {} });
        return;
      case 'reasoning': {
        const text = (item.content?.length ? item.content : item.summary).map((part) => part.text).join('\n');
        const handBack = handBackOf(item.encrypted_content, item.id);
        assistantPart({ type: 'reasoning', text, ...(handBack ? { providerOptions: handBack } : {}) });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
        if (item.call_id !== undefined) toolResult(item.call_id, item.output, index);
        // no call of the model's to answer: what the client's tool says, for the model to read as context
        else messages.push({ role: 'user', content: `[${[item.namespace, item.name ?? 'tool'].filter(Boolean).join('.')} output]\n${outputText(item.output, `${fieldOf(index)}.output`, notes)}` });
        return;
      case 'tool_search_output':
        toolset.add(item.tools, `${fieldOf(index)}.tools`);
        toolResult(item.call_id, JSON.stringify({ tools: item.tools.map((tool) => ('name' in tool ? tool.name : tool.type)) }), index);
        return;
      case 'additional_tools':
        toolset.add(item.tools, `${fieldOf(index)}.tools`);
        return;
      default:
        // an earlier answer's text joins the assistant turn its reasoning opened
        if (item.role === 'assistant' && messages.at(-1)?.role === 'assistant') {
          assistantPart({ type: 'text', text: typeof item.content === 'string' ? item.content : item.content.map(textOf).join('') });
          return;
        }
        messages.push(...messageOf(item, fieldOf(index), imageFields, notes));
    }
  });
  if (messages.every((message) => message.role === 'system')) {
    throw new ApiError(400, 'invalid_request', 'input: no user, assistant or tool item to answer', { field: 'input' });
  }
  return { messages, imageFields };
}

const isForeign = (item: ResponsesInputItem): item is Extract<ResponsesInputItem, { type: (typeof FOREIGN_ITEMS)[number] }> =>
  (FOREIGN_ITEMS as readonly (string | undefined)[]).includes(item.type);

const KEPT_MINUTES = KEPT_MS / 60_000;

/** The output item an item_reference names, as an input item (this gateway's output items are valid input items). */
function referenced(id: string, index: number, owners: Owner[]): ConversationItem {
  const field = `input[${index}].id`;
  const unknown = `item ${JSON.stringify(id)} is not known here (an answer's output items are kept ${KEPT_MINUTES} minutes by the instance that gave them, unless asked with store false): send the item itself (the AI SDK: providerOptions.openai.store false)`;
  return keptAt(keptItems, id, field, owners, unknown) as ConversationItem;
}

/** The conversation a previous response ended: the input items it answered, then its output items. */
function conversationOf(responseId: string, owners: Owner[]): readonly ConversationItem[] {
  const unknown = `response ${JSON.stringify(responseId)} is not known here (an answer is kept ${KEPT_MINUTES} minutes by the instance that gave it, unless asked with store false): send the whole conversation as input items`;
  return keptAt(keptConversations, responseId, 'previous_response_id', owners, unknown) as readonly ConversationItem[];
}

/** What an earlier answer left under `id`, its payer noted as the owner `field` names; else a 400 at `field`, `unknown` saying why. */
function keptAt<T>(kept: KeptById<PaidFor<T>>, id: string, field: string, owners: Owner[], unknown: string): T {
  const found = kept.get(id);
  if (!found) throw new ApiError(400, 'invalid_request', `${field}: ${unknown}`, { field });
  owners.push({ payer: found.payer, field });
  return found.value;
}

/** A message item as the turn it is: developer and system messages are system turns. */
function messageOf(item: Extract<ResponsesInputItem, { role: string }>, itemField: string, imageFields: Map<string, string>, notes: RequestNotes): ModelMessage[] {
  const role = item.role === 'developer' ? 'system' : item.role;
  if (typeof item.content === 'string') return [{ role, content: item.content } as ModelMessage];
  if (role === 'user') {
    const parts: (TextPart | ImagePart)[] = item.content.map((part, at) => {
      const field = `${itemField}.content[${at}]`;
      if (part.type === 'input_image') {
        if (!part.image_url) throw new ApiError(400, 'invalid_request', `${field}.image_url: required (file_id needs stored files)`, { field: `${field}.image_url` });
        const { image, mediaType } = imageInput(part.image_url, field);
        imageFields.set(image instanceof URL ? image.href : `inline:${imageFields.size}`, field);
        return { type: 'image', image, ...(mediaType ? { mediaType } : {}) };
      }
      if (part.type === 'input_file') return { type: 'text', text: fileText(part, field, notes) };
      return { type: 'text', text: textOf(part) };
    });
    return [{ role: 'user', content: parts }];
  }
  item.content.forEach((part, at) => {
    if (part.type === 'input_image') throw new ApiError(400, 'invalid_request', `${itemField}.content[${at}]: images only in user messages`, { field: `${itemField}.content[${at}]` });
  });
  return [{ role, content: item.content.map((part, at) => (part.type === 'input_file' ? fileText(part, `${itemField}.content[${at}]`, notes) : textOf(part))).join('') } as ModelMessage];
}

/** A call output's text; an image in it (Codex's view_image) is said in its place and named, as on /v1/messages. */
function outputText(output: Extract<ResponsesInputItem, { type: 'function_call_output' }>['output'], field: string, notes: RequestNotes): string {
  if (typeof output === 'string') return output;
  return output
    .map((part, at) => {
      if (part.type === 'input_text') return part.text;
      notes.ignore(`${field}[${at}]`);
      return TOOL_RESULT_IMAGE;
    })
    .join('');
}

function textOf(part: { type: string; text?: string; refusal?: string }): string {
  return part.text ?? part.refusal ?? '';
}

function asParts(content: Extract<ModelMessage, { role: 'assistant' }>['content']): Exclude<typeof content, string> {
  return typeof content === 'string' ? (content ? [{ type: 'text', text: content }] : []) : content;
}
