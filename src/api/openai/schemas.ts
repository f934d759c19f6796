// Request and response bodies of the OpenAI-compatible routes (/v1), as OpenAI's API states them, limited
// to what the gateway can honour. The same zod schemas validate requests and write the OpenAPI document.
import { z } from 'zod';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');

const textPart = z.object({ type: z.literal('text'), text: z.string().max(100_000) }).strict();
const textContent = z.union([z.string().max(100_000), z.array(textPart).min(1).max(100)]).describe('A string, or an array of text parts');

const imagePart = z
  .object({
    type: z.literal('image_url'),
    image_url: z
      .object({
        url: z.string().min(1).describe('A data URL (data:image/png;base64,...) or an http(s) URL the gateway fetches (public hosts, at most 5 MB)'),
        detail: z.enum(['auto', 'low', 'high']).optional().describe('Accepted and not used'),
      })
      .strict(),
  })
  .strict()
  .describe('Only for models whose supports.vision is true');

const toolCall = z
  .object({
    id: z.string().min(1).max(200),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1).max(64), arguments: z.string().max(100_000) }).strict(),
  })
  .strict();

const name = z.string().max(100).optional().describe('Accepted and not used');

const chatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: textContent, name }).strict(),
  z
    .object({
      role: z.literal('user'),
      content: z.union([z.string().max(100_000), z.array(z.union([textPart, imagePart])).min(1).max(100)]),
      name,
    })
    .strict(),
  z
    .object({
      role: z.literal('assistant'),
      content: textContent.nullable().optional(),
      tool_calls: z.array(toolCall).min(1).max(128).optional(),
      refusal: z.string().nullable().optional().describe('Accepted and not used'),
      name,
    })
    .strict()
    .refine((message) => (message.content !== undefined && message.content !== null) || message.tool_calls !== undefined, {
      message: 'an assistant message needs content or tool_calls',
      path: ['content'],
    }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1).max(200), content: textContent }).strict(),
]);

const toolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a function name: letters, digits, _ and -, at most 64')
  .describe('Function name');

/** A JSON Schema object, as given (validated as a schema where a model must follow it) */
const jsonSchemaObject = z.record(z.string(), z.unknown());

const functionTool = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: toolName,
        description: z.string().max(10_000).optional(),
        parameters: jsonSchemaObject.optional().describe('JSON Schema of the arguments (an object); absent: no arguments'),
        strict: z.boolean().nullable().optional(),
      })
      .strict(),
  })
  .strict();

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: toolName }).strict() }).strict(),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      json_schema: z
        .object({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a name: letters, digits, _ and -, at most 64'),
          description: z.string().max(10_000).optional(),
          schema: jsonSchemaObject.optional(),
          strict: z.boolean().nullable().optional(),
        })
        .strict(),
    })
    .strict(),
]);

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
    tools: z.array(functionTool).max(128).optional().describe('Function tools (models whose supports.tools is true)'),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional().describe('false: at most one tool call per answer'),
    response_format: responseFormat.optional().describe('text, json_object or json_schema (models whose supports.jsonSchema is true)'),
    user: z.string().max(200).optional().describe('Accepted and not used'),
  })
  .strict();
export type OpenAIChatRequest = z.infer<typeof openaiChatRequestSchema>;

const usage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).optional().describe('When the model reports cache reads'),
  completion_tokens_details: z.object({ reasoning_tokens: z.number().int() }).optional().describe('When the model reports reasoning tokens'),
});

const receipt = z
  .object({ success: z.boolean(), transaction: z.string(), network: z.string(), payer: z.string(), amount: z.string() })
  .describe('The settlement receipt (the X-PAYMENT-RESPONSE facts) and the amount charged in atomic units');

const answeredToolCall = z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });

export const openaiChatResponseSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal('assistant'),
        content: z.string().nullable().describe('null when the answer is tool calls only'),
        refusal: z.null(),
        tool_calls: z.array(answeredToolCall).optional(),
      }),
      finish_reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter']),
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
        delta: z.object({
          role: z.literal('assistant').optional(),
          content: z.string().optional(),
          tool_calls: z
            .array(
              z.object({
                index: z.number().int(),
                id: z.string().optional(),
                type: z.literal('function').optional(),
                function: z.object({ name: z.string().optional(), arguments: z.string() }),
              }),
            )
            .optional()
            .describe("A call's first delta carries id, type and name; the next ones fragments of its arguments"),
        }),
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
  data: z.array(
    z.object({
      id: z.string(),
      object: z.literal('model'),
      created: z.number().int(),
      owned_by: z.string(),
      supports: z
        .object({ tools: z.boolean(), json_schema: z.boolean(), vision: z.boolean(), streaming: z.boolean() })
        .optional()
        .describe('Chat models: what the model honours beyond text'),
    }),
  ),
});

export const openaiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});

/** Fields of OpenAI's chat request this gateway cannot honour: a 400 naming the field, before any price. */
export const UNSUPPORTED_CHAT_FIELDS = [
  'functions',
  'function_call',
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
