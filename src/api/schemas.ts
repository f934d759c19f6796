// Request and response bodies of the three endpoints. These zod schemas are the single source of
// validation, of the TypeScript types, and of the OpenAPI document (http/openapi.ts).
import { z } from 'zod';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /api/v1/ai/models');

/** Provider-specific extra fields; only keys the model allows are passed through. */
const options = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .describe('Provider-specific extra fields; only the keys the model lists in allowedOptions are accepted');

const chatMessage = z
  .object({
    role: z.enum(['system', 'user', 'assistant']),
    content: z.string().max(100_000),
  })
  .strict();

export const chatRequestSchema = z
  .object({
    model: modelId,
    prompt: z.string().max(100_000).optional().describe('Prompt text, sent as a user message after any messages'),
    messages: z.array(chatMessage).min(1).max(200).optional().describe('Chat messages, oldest first'),
    input: z.array(chatMessage).min(1).max(200).optional().describe('Same shape and meaning as messages'),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().min(1).optional().describe('Upper bound of the completion; at most the model ceiling'),
    options: options.optional(),
    stream: z.boolean().optional().describe('true: the answer comes as server-sent events (text/event-stream) as the model produces it'),
    stream_options: z
      .object({ include_usage: z.boolean().optional() })
      .strict()
      .optional()
      .describe('Accepted for OpenAI compatibility; the last event always carries usage'),
  })
  .strict()
  .refine((body) => body.prompt !== undefined || body.messages !== undefined || body.input !== undefined, {
    message: 'one of prompt, messages or input is required',
    path: ['prompt'],
  });
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export const chatResponseSchema = z.object({
  id: z.string(),
  model: z.string(),
  response: z.string(),
  usage: z.object({ tokens: z.number().int().describe('prompt + completion tokens') }),
});
export type ChatResponse = z.infer<typeof chatResponseSchema>;

export const imageRequestSchema = z
  .object({
    model: modelId.optional().describe('Defaults to the configured image model'),
    prompt: z.string().min(1).max(4000),
    n: z.number().int().min(1).optional().describe('Number of images, 1 to the model maximum; default 1'),
    size: z
      .string()
      .regex(/^\d{1,5}x\d{1,5}$/, 'size must look like <width>x<height>')
      .optional()
      .describe('One of the model sizes; default the model default size'),
    options: options.optional(),
  })
  .strict();
export type ImageRequest = z.infer<typeof imageRequestSchema>;

export const imageResponseSchema = z.object({
  model: z.string(),
  images: z.array(z.url()),
});
export type ImageResponse = z.infer<typeof imageResponseSchema>;

export const ttsRequestSchema = z
  .object({
    model: modelId.optional().describe('Defaults to the configured speech model'),
    text: z
      .string()
      .min(1)
      // whitespace, zero-width characters or punctuation alone are spoken as silence
      .refine((text) => /[\p{L}\p{N}]/u.test(text), 'text must hold something to speak: a letter or a digit')
      .describe('Text to speak, up to the model maximum length'),
    voice: z.string().min(1).max(100).optional().describe('One of the model voices; default the model default voice'),
    format: z
      .string()
      .min(1)
      .max(20)
      .optional()
      .describe('Audio file format (e.g. wav, mp3, ogg), one of the model formats; default the model default format'),
    options: options.optional(),
  })
  .strict();
export type TtsRequest = z.infer<typeof ttsRequestSchema>;

export const ttsResponseSchema = z.object({
  model: z.string(),
  audioUrl: z.url(),
});
export type TtsResponse = z.infer<typeof ttsResponseSchema>;
