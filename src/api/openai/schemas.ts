// Request and response bodies of the OpenAI-compatible routes (/v1), as OpenAI's API states them, limited
// to what the gateway can honour. The same zod schemas validate requests and write the OpenAPI document.
import { z } from 'zod';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');

const textPart = z.object({ type: z.literal('text'), text: z.string().max(100_000) }).strict();

const chatMessage = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant']),
    content: z.union([z.string().max(100_000), z.array(textPart).min(1).max(100)]).describe('A string, or an array of text parts'),
    name: z.string().max(100).optional().describe('Accepted and not used'),
  })
  .strict();

export const openaiChatRequestSchema = z
  .object({
    model: modelId,
    messages: z.array(chatMessage).min(1).max(200),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    presence_penalty: z.number().min(-2).max(2).optional(),
    frequency_penalty: z.number().min(-2).max(2).optional(),
    max_tokens: z.number().int().min(1).optional().describe('Upper bound of the completion; at most the model ceiling'),
    max_completion_tokens: z.number().int().min(1).optional().describe('Same as max_tokens; wins when both are given'),
    stop: z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(4)]).optional(),
    seed: z.number().int().min(0).max(2 ** 31 - 1).optional().describe('Only for models that list seed in their options'),
    n: z.literal(1).optional().describe('Only 1'),
    stream: z.boolean().optional().describe('true: server-sent events of chat.completion.chunk objects, then data: [DONE]'),
    stream_options: z.object({ include_usage: z.boolean().optional() }).strict().optional(),
    response_format: z.object({ type: z.literal('text') }).strict().optional().describe('Only { type: "text" }'),
    user: z.string().max(200).optional().describe('Accepted and not used'),
  })
  .strict();
export type OpenAIChatRequest = z.infer<typeof openaiChatRequestSchema>;

const usage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

const receipt = z
  .object({ success: z.boolean(), transaction: z.string(), network: z.string(), payer: z.string(), amount: z.string() })
  .describe('The settlement receipt (the X-PAYMENT-RESPONSE facts) and the amount charged in atomic units');

export const openaiChatResponseSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal('assistant'), content: z.string() }),
      finish_reason: z.string(),
    }),
  ),
  usage,
});
export type OpenAIChatResponse = z.infer<typeof openaiChatResponseSchema>;

export const openaiChatChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
        finish_reason: z.string().nullable(),
      }),
    ),
    usage: usage.nullable().optional().describe('On the last chunk when stream_options.include_usage is true'),
    x402: receipt.optional().describe('On the last chunk: the payment receipt'),
  })
  .describe('One `data:` event of a streamed chat completion');

export const openaiImageRequestSchema = z
  .object({
    model: modelId.optional().describe('Defaults to the configured image model'),
    prompt: z.string().min(1).max(4000),
    n: z.number().int().min(1).optional(),
    size: z.string().regex(/^\d{1,5}x\d{1,5}$/, 'size must look like <width>x<height>').optional(),
    response_format: z.enum(['url', 'b64_json']).optional().describe('Default url: a GET /media/<id> URL of this service'),
    user: z.string().max(200).optional().describe('Accepted and not used'),
  })
  .strict();
export type OpenAIImageRequest = z.infer<typeof openaiImageRequestSchema>;

export const openaiImageResponseSchema = z.object({
  created: z.number().int(),
  data: z.array(z.union([z.object({ url: z.url() }), z.object({ b64_json: z.string() })])),
});
export type OpenAIImageResponse = z.infer<typeof openaiImageResponseSchema>;

export const openaiSpeechRequestSchema = z
  .object({
    model: modelId.optional().describe('Defaults to the configured speech model'),
    input: z.string().min(1).describe('Text to speak, up to the model maximum length'),
    voice: z.string().min(1).max(100).optional().describe('One of the model voices'),
    response_format: z.string().min(1).max(20).optional().describe('One of the model formats (e.g. wav, mp3)'),
    speed: z.number().optional().describe('Only for models that list speed in their options, in their range'),
  })
  .strict();
export type OpenAISpeechRequest = z.infer<typeof openaiSpeechRequestSchema>;

export const openaiModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })),
});

export const openaiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});

/** Fields of OpenAI's chat request this gateway cannot honour: a 400 naming the field, before any price. */
export const UNSUPPORTED_CHAT_FIELDS = [
  'tools',
  'tool_choice',
  'functions',
  'function_call',
  'parallel_tool_calls',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'audio',
  'modalities',
  'prediction',
  'web_search_options',
  'reasoning_effort',
  'store',
  'metadata',
  'service_tier',
] as const;
