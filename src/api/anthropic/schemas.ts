// Request and response bodies of POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API),
// as Anthropic states them and as Claude Code and the Anthropic SDKs send them. A top-level field the gateway
// cannot honour is a 400 naming it (MESSAGES_FIELD_RULES); one that changes nothing the client relies on is
// accepted and reported in X-Ignored-Fields, as is an extra key inside a block or a tool (parseRequest). Lengths
// are bounded by the request body limit, not per field.
import { z } from 'zod';
import type { FieldRules } from '../request-fields.ts';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');
const cacheControl = z
  .object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .strict()
  .nullable()
  .optional()
  .describe('Passed to an Anthropic-protocol upstream as given; accepted and not used by other models');

const textBlock = z
  .object({
    type: z.literal('text'),
    text: z.string(),
    cache_control: cacheControl,
    citations: z.array(z.unknown()).nullable().optional().describe("An answer's sources (Anthropic's web search): left out, and named"),
  })
  .strict();

/**
 * A document: a plain-text one (`text` or `content` source) is read as its text; a PDF or one by URL is not read by a
 * model here, said in its place and named (Claude Code's Read of a PDF)
 */
const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.string(), data: z.unknown().optional(), content: z.unknown().optional() }),
  title: z.string().nullable().optional(),
  cache_control: cacheControl,
});
/** a search result a client's tool returned: read as its title and text */
const searchResultBlock = z.looseObject({
  type: z.literal('search_result'),
  title: z.string().optional(),
  source: z.string().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional(),
  cache_control: cacheControl,
});
/** a tool Claude Code's tool search found: every tool is loaded here up front, so it reads as that tool's name */
const toolReferenceBlock = z.looseObject({ type: z.literal('tool_reference'), tool_name: z.string().max(200) });
/** an earlier answer's call of a tool Anthropic runs, and its result (web search): left out, and named */
export const SERVER_TOOL_BLOCKS = [
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'mcp_tool_use',
  'mcp_tool_result',
] as const;
const serverToolBlock = z.looseObject({ type: z.enum(SERVER_TOOL_BLOCKS), cache_control: cacheControl });

const imageSource = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string(),
    })
    .strict(),
  z.object({ type: z.literal('url'), url: z.string().max(2_000) }).strict(),
]);
const imageBlock = z.object({ type: z.literal('image'), source: imageSource, cache_control: cacheControl }).strict();

const toolUseBlock = z
  .object({
    type: z.literal('tool_use'),
    id: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    input: z.record(z.string(), z.unknown()),
    cache_control: cacheControl,
  })
  .strict();

const toolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1).max(200),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, searchResultBlock, toolReferenceBlock]))]).optional(),
    is_error: z.boolean().optional(),
    cache_control: cacheControl,
  })
  .strict();

/** the model's earlier thinking, handed back with its signature (an Anthropic upstream checks it) */
const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() }).strict();
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() }).strict();

const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
  documentBlock,
  searchResultBlock,
  serverToolBlock,
]);
export type AnthropicContentBlock = z.infer<typeof contentBlock>;

const message = z
  .object({
    role: z.enum(['user', 'assistant', 'system']).describe('system: a system turn mid-conversation, as Claude Code sends its environment'),
    content: z.union([z.string(), z.array(contentBlock)]),
  })
  .strict();
export type AnthropicMessage = z.infer<typeof message>;

const customTool = z
  .object({
    type: z.literal('custom').nullable().optional(),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, 'a tool name is 1 to 128 letters, digits, _ or -'),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()).describe('A JSON Schema (type: object) of the tool input'),
    strict: z.boolean().optional(),
    cache_control: cacheControl,
    defer_loading: z.boolean().optional().describe('Accepted and not used: every tool is loaded'),
    eager_input_streaming: z.boolean().nullable().optional().describe('Accepted and not used: tool input always streams as the model writes it'),
  })
  .strict();
/** a tool Anthropic runs or defines itself (web_search_*, bash_*, ...): left out, and named in X-Ignored-Fields */
const providerTool = z.looseObject({ type: z.string().regex(/^(?!custom$)/), name: z.string().optional() });
export type CustomTool = z.infer<typeof customTool>;
export type AnthropicTool = CustomTool | z.infer<typeof providerTool>;

const disableParallel = z.boolean().optional();
const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: disableParallel }).strict(),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: disableParallel }).strict(),
  z.object({ type: z.literal('tool'), name: z.string().min(1).max(128), disable_parallel_tool_use: disableParallel }).strict(),
  z.object({ type: z.literal('none') }).strict(),
]);

const system = z.union([z.string(), z.array(textBlock)]).describe('A string, or text blocks (each with its cache_control)');

// any word: Claude Code sends values newer than these two (`updates`), which are ignored, and said so
const display = z.string().max(40).nullable().optional().describe('summarized or omitted; any other value is accepted and ignored (X-Ignored-Fields)');
const thinking = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1), display }).strict(),
    z.object({ type: z.literal('adaptive'), display }).strict(),
    z.object({ type: z.literal('disabled') }).strict(),
    z.looseObject({ type: z.literal('between_tools') }).describe('Accepted and ignored (X-Ignored-Fields): no upstream here takes it'),
  ])
  .describe('Passed to models that think (supports.reasoning) on an Anthropic-protocol upstream; accepted and ignored elsewhere');

const outputFormat = z.object({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }).strict();

const outputConfig = z
  .object({
    effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullable().optional().describe('Passed to models that think; accepted and ignored elsewhere'),
    format: outputFormat
      .nullable()
      .optional()
      .describe('Structured output: the answer is JSON following the schema (models whose supports.jsonSchema is true)'),
  })
  .strict();

const contextManagement = z
  .object({ edits: z.array(z.looseObject({ type: z.string() })) })
  .strict()
  .describe('Passed to an Anthropic-protocol upstream; accepted and ignored elsewhere (no server-side context here)');

/** what count_tokens and messages share: what the model reads */
const promptFields = {
  model: modelId,
  messages: z.array(message).min(1),
  system: system.optional(),
  tools: z.array(z.union([customTool, providerTool])).max(1_000).optional(),
  tool_choice: toolChoice.optional(),
};

export const messagesRequestSchema = z
  .object({
    ...promptFields,
    max_tokens: z.number().int().min(1).describe("Required, as Anthropic requires it: upper bound of the answer; above the model's ceiling it is lowered to it (X-Clamped-Fields)"),
    stop_sequences: z.array(z.string().min(1).max(1_000)).max(64).nullable().optional(),
    temperature: z.number().min(0).max(1).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    top_k: z.number().int().nullable().optional().describe('Sample from the k likeliest tokens; 0 or less (LangChain sends -1): not restricted'),
    stream: z.boolean().optional().describe("true: Anthropic's server-sent events, message_start to message_stop"),
    thinking: thinking.optional(),
    output_config: outputConfig.optional(),
    output_format: outputFormat.nullable().optional().describe('The beta name of output_config.format (@anthropic-ai/sdk beta.messages.parse): the same'),
    context_management: contextManagement.nullable().optional(),
    service_tier: z.enum(['auto', 'standard_only']).optional().describe('Accepted: one tier here'),
  })
  .strict();
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

/** What /v1/messages does with top-level fields outside the schema. */
export const MESSAGES_FIELD_RULES: FieldRules = {
  refused: {
    container: 'containers need stored state; not supported',
    mcp_servers: 'MCP servers are not supported by this gateway',
    // the shape @anthropic-ai/sdk reads to go on without threads (its tool runner threads by default)
    thread: { why: 'message threads need stored state; not supported (send the whole conversation)', details: { error_code: 'thread_unsupported_request', unsupported: ['thread'] } },
  },
  // hints about caching (cache_control at the top: automatic caching), speed, region and diagnostics, and the context
  // of Anthropic's own server-side checks (Claude Code's `safeguards` in its auto permission mode): nothing here reads them
  ignored: ['metadata', 'cache_control', 'speed', 'inference_geo', 'diagnostics', 'safeguards'],
};

/** count_tokens takes the body the client will send to /v1/messages: what only shapes the answer is dropped and noted */
export const COUNT_TOKENS_FIELD_RULES: FieldRules = {
  refused: MESSAGES_FIELD_RULES.refused,
  ignored: [...MESSAGES_FIELD_RULES.ignored, 'max_tokens', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'service_tier', 'output_format'],
};

export const countTokensRequestSchema = z
  .object({ ...promptFields, thinking: thinking.optional(), output_config: outputConfig.optional(), context_management: contextManagement.nullable().optional() })
  .strict();
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;

const usage = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_creation_input_tokens: z.number().int().nullable().optional(),
  cache_read_input_tokens: z.number().int().nullable().optional(),
});

const responseText = z.object({ type: z.literal('text'), text: z.string() });
const responseToolUse = z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) });
const responseThinking = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const responseRedactedThinking = z.object({ type: z.literal('redacted_thinking'), data: z.string() });
export type ResponseBlock =
  | z.infer<typeof responseText>
  | z.infer<typeof responseToolUse>
  | z.infer<typeof responseThinking>
  | z.infer<typeof responseRedactedThinking>;

export const messagesResponseSchema = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(z.union([responseThinking, responseRedactedThinking, responseText, responseToolUse])).describe('Thinking blocks (models that think) come first'),
  stop_reason: z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use']),
  stop_sequence: z.string().nullable(),
  usage,
});
export type MessagesResponse = z.infer<typeof messagesResponseSchema>;

export const countTokensResponseSchema = z.object({ input_tokens: z.number().int() });

export const messagesEventSchema = z
  .object({
    type: z.string().describe('message_start, content_block_start, ping, content_block_delta, content_block_stop, message_delta, message_stop, or error'),
    x402: z
      .object({ success: z.boolean(), transaction: z.string(), network: z.string(), payer: z.string(), amount: z.string() })
      .optional()
      .describe('On message_stop: the payment receipt and the amount charged (atomic units)'),
  })
  .passthrough()
  .describe('One server-sent event (`event: <type>` then `data: <this>`)');

export const anthropicErrorSchema = z.object({
  type: z.literal('error'),
  error: z.object({ type: z.string(), message: z.string() }),
});
