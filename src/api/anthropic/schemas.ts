// Request and response bodies of POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API),
// as Anthropic states them, limited to what the gateway can honour. Unknown fields are a 400 naming the field
// (strict objects); `cache_control` marks are accepted and have no effect (nothing is cached here).
import { z } from 'zod';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');
const text = z.string().max(100_000);
const cacheControl = z
  .object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .strict()
  .nullable()
  .optional()
  .describe('Accepted and not used: nothing is cached here');

const textBlock = z
  .object({ type: z.literal('text'), text, cache_control: cacheControl, citations: z.array(z.unknown()).max(0).nullable().optional() })
  .strict();

const imageSource = z.union([
  z
    .object({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string().max(20_000_000),
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
    content: z.union([text, z.array(z.union([textBlock, imageBlock])).max(100)]).optional(),
    is_error: z.boolean().optional(),
    cache_control: cacheControl,
  })
  .strict();

const contentBlock = z.union([textBlock, imageBlock, toolUseBlock, toolResultBlock]);
export type AnthropicContentBlock = z.infer<typeof contentBlock>;

const message = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: z.union([text, z.array(contentBlock).max(200)]),
  })
  .strict();
export type AnthropicMessage = z.infer<typeof message>;

const tool = z
  .object({
    type: z.literal('custom').optional(),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a tool name is 1 to 64 letters, digits, _ or -'),
    description: z.string().max(10_000).optional(),
    input_schema: z.record(z.string(), z.unknown()).describe('A JSON Schema (type: object) of the tool input'),
    cache_control: cacheControl,
  })
  .strict();

const disableParallel = z.boolean().optional();
const toolChoice = z.union([
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: disableParallel }).strict(),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: disableParallel }).strict(),
  z.object({ type: z.literal('tool'), name: z.string().min(1).max(64), disable_parallel_tool_use: disableParallel }).strict(),
  z.object({ type: z.literal('none') }).strict(),
]);

const system = z.union([text, z.array(textBlock).max(100)]).describe('A string, or text blocks');

/** what count_tokens and messages share: what the model reads */
const promptFields = {
  model: modelId,
  messages: z.array(message).min(1).max(200),
  system: system.optional(),
  tools: z.array(tool).max(128).optional(),
  tool_choice: toolChoice.optional(),
};

export const messagesRequestSchema = z
  .object({
    ...promptFields,
    max_tokens: z.number().int().min(1).describe('Required, as Anthropic requires it: upper bound of the answer, at most the model ceiling'),
    stop_sequences: z.array(z.string().min(1).max(200)).max(4).optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    stream: z.boolean().optional().describe("true: Anthropic's server-sent events, message_start to message_stop"),
    metadata: z.object({ user_id: z.string().max(256).nullable().optional() }).strict().optional().describe('Accepted and not used'),
    service_tier: z.enum(['auto', 'standard_only']).optional().describe('Accepted: one tier here'),
  })
  .strict();
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

export const countTokensRequestSchema = z.object(promptFields).strict();
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;

/** Fields of Anthropic's request this gateway cannot honour: a 400 naming the field, before any price. */
export const REFUSED_MESSAGES_FIELDS: Readonly<Record<string, string>> = {
  thinking: 'extended thinking is not supported by the models here',
  top_k: 'not supported by this gateway',
  service_tier: 'one tier here: auto or standard_only, or leave it out',
  container: 'containers need stored state; not supported',
  mcp_servers: 'MCP servers are not supported by this gateway',
  context_management: 'not supported by this gateway',
};

const usage = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_creation_input_tokens: z.number().int().nullable().optional(),
  cache_read_input_tokens: z.number().int().nullable().optional(),
});

const responseText = z.object({ type: z.literal('text'), text: z.string() });
const responseToolUse = z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) });
export type ResponseBlock = z.infer<typeof responseText> | z.infer<typeof responseToolUse>;

export const messagesResponseSchema = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(z.union([responseText, responseToolUse])),
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
