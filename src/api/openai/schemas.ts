// Request and response bodies of the OpenAI-compatible routes (/v1), as OpenAI's API states them, limited
// to what the gateway can honour. The same zod schemas validate requests and write the OpenAPI document.
import { z } from 'zod';
import type { FieldRules } from '../request-fields.ts';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');

const textPart = z.object({ type: z.literal('text'), text: z.string() }).strict();
const textContent = z.union([z.string(), z.array(textPart).min(1)]).describe('A string, or an array of text parts');

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

/** an earlier answer's refusal, sent back as history */
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() }).strict();

const toolCall = z
  .object({
    id: z.string().min(1).max(200),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1).max(128), arguments: z.string() }).strict(),
  })
  .strict();

/** a file: a text file sent inline is read as its text; any other is said in its place, and named */
const filePart = z
  .object({
    type: z.literal('file'),
    file: z.object({ file_data: z.string().nullable().optional(), file_id: z.string().nullable().optional(), filename: z.string().max(500).nullable().optional() }).strict(),
  })
  .strict();

const chatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: textContent }).strict(),
  z
    .object({
      role: z.literal('user'),
      content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, imagePart, filePart])).min(1)]),
    })
    .strict(),
  z
    .object({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart]))]).nullable().optional(),
      tool_calls: z.array(toolCall).min(1).optional(),
      refusal: z.string().nullable().optional().describe('Accepted and not used'),
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
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a function name: letters, digits, _, . and -, at most 128')
  .describe('Function name');

/** A JSON Schema object, as given (validated as a schema where a model must follow it) */
const jsonSchemaObject = z.record(z.string(), z.unknown());

const functionTool = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: toolName,
        description: z.string().optional(),
        parameters: jsonSchemaObject.optional().describe('JSON Schema of the arguments (an object); absent: no arguments'),
        strict: z.boolean().nullable().optional(),
      })
      .strict(),
  })
  .strict();
/** a tool of another type (custom, a provider's own): left out, and named in X-Ignored-Fields */
const otherTool = z.looseObject({ type: z.string().regex(/^(?!function$)/) });
export type OpenAIChatTool = z.infer<typeof functionTool> | z.infer<typeof otherTool>;

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: toolName }).strict() }).strict(),
  z
    .object({
      type: z.literal('allowed_tools'),
      allowed_tools: z
        .object({ mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }).optional() })).max(1_000) })
        .strict(),
    })
    .strict()
    .describe('Only these tools are offered to the model, in this mode'),
  z.looseObject({ type: z.literal('custom') }).describe('Custom tools are left out here: read as auto, and named'),
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
          description: z.string().optional(),
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
    messages: z.array(chatMessage).min(1),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional().describe("Upper bound of the completion; above the model's ceiling it is lowered to it (X-Clamped-Fields)"),
    max_completion_tokens: z.number().int().min(1).nullable().optional().describe('Same as max_tokens; wins when both are given'),
    stop: z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(4)]).nullable().optional(),
    seed: z.number().int().nullable().optional().describe('Only for models that list seed in their options; outside 0 to 2^31-1 it is folded into that range (X-Clamped-Fields)'),
    n: z.literal(1, { error: 'only one choice per request (n = 1)' }).nullable().optional().describe('Only 1'),
    stream: z.boolean().nullable().optional().describe('true: server-sent events of chat.completion.chunk objects, then data: [DONE]'),
    stream_options: z.object({ include_usage: z.boolean().optional() }).strict().nullable().optional(),
    tools: z.array(z.union([functionTool, otherTool])).max(1_000).optional().describe('Function tools (models whose supports.tools is true)'),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullable().optional().describe('false: at most one tool call per answer'),
    response_format: responseFormat.optional().describe('text, json_object or json_schema (models whose supports.jsonSchema is true)'),
    reasoning_effort: z.string().max(20).nullable().optional().describe('Passed to models that think (supports.reasoning); accepted and ignored elsewhere'),
    prompt_cache_key: z.string().max(1_000).nullable().optional().describe('Passed to OpenAI-protocol upstreams; accepted and ignored elsewhere'),
    modalities: z.array(z.literal('text')).nullable().optional().describe('Text only'),
  })
  .strict();
export type OpenAIChatRequest = z.infer<typeof openaiChatRequestSchema>;

/** What /v1/chat/completions does with top-level fields outside the schema. */
export const CHAT_COMPLETIONS_FIELD_RULES: FieldRules = {
  refused: {
    functions: 'not supported by this gateway (use tools and tool_choice)',
    function_call: 'not supported by this gateway (use tools and tool_choice)',
    logprobs: 'not supported by this gateway (text and tool-calling chat completions only)',
    top_logprobs: 'not supported by this gateway (text and tool-calling chat completions only)',
    logit_bias: 'not supported by this gateway (text and tool-calling chat completions only)',
    audio: 'not supported by this gateway (text and tool-calling chat completions only)',
    web_search_options: 'not supported by this gateway (text and tool-calling chat completions only)',
    moderation: 'not offered by this gateway',
  },
  // prediction (predicted output) only speeds an answer up: the answer is the same without it
  ignored: ['metadata', 'store', 'user', 'safety_identifier', 'service_tier', 'verbosity', 'prompt_cache_retention', 'prompt_cache_options', 'prediction'],
};

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
    n: z.number().int().min(1).nullable().optional(),
    size: z
      .union([z.literal('auto'), z.string().regex(/^\d{1,5}x\d{1,5}$/, 'size must look like <width>x<height>, or auto')])
      .nullable()
      .optional()
      .describe("auto: the model's default size"),
    response_format: z.enum(['url', 'b64_json']).nullable().optional().describe('Default url: a GET /media/<id> URL of this service'),
    output_format: z.literal('png').nullable().optional().describe('The images are PNG'),
    background: z.enum(['auto', 'opaque']).nullable().optional().describe('The images are opaque'),
  })
  .strict();

/** What /v1/images/generations does with top-level fields outside the schema: rendering hints no model here reads. */
export const IMAGE_FIELD_RULES: FieldRules = {
  refused: { stream: 'images are answered whole here', partial_images: 'images are answered whole here' },
  ignored: ['user', 'quality', 'style', 'moderation', 'output_compression'],
};
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
    stream_format: z.literal('audio').nullable().optional().describe('The audio answered whole'),
  })
  .strict();

/** What /v1/audio/speech does with top-level fields outside the schema. */
export const SPEECH_FIELD_RULES: FieldRules = { refused: {}, ignored: ['instructions', 'user'] };

/**
 * OpenAI's voices, which its SDK makes every caller name: one a model here does not offer is read as "the default
 * voice" (and named in X-Ignored-Fields); any other voice it does not offer is a 400.
 */
export const OPENAI_VOICES: ReadonlySet<string> = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse', 'marin', 'cedar']);
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
        .object({ tools: z.boolean(), json_schema: z.boolean(), vision: z.boolean(), streaming: z.boolean(), reasoning: z.boolean() })
        .optional()
        .describe('Chat models: what the model honours beyond text'),
    }),
  ),
});

export const openaiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
