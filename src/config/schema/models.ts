// The model catalog: each model's capability, limits and price, the providers serving them, and the defaults.
import { z } from 'zod';
import { AUDIO_FORMATS, speechProviderFormats } from '../engines.ts';
import { upstreamProvider } from './providers.ts';

/** Integer amount in USDC atomic units (6 decimals), written as a string: "10000" = 0.01 USDC. */
export const atomicAmount = z
  .union([z.string(), z.number().int().nonnegative()])
  .transform((value) => String(value))
  .pipe(z.string().regex(/^\d{1,30}$/, 'an integer amount in atomic units (e.g. "10000" = 0.01 USDC)'));

const price = {
  chat: z.object({
    perRequest: atomicAmount,
    /** per 1000 tokens of max_tokens (the most the answer may cost) */
    perThousandOutputTokens: atomicAmount,
    /** per 1000 characters of prompt text */
    perThousandInputChars: atomicAmount,
  }),
  image: z.object({
    /** price of one image, per allowed size */
    perImageBySize: z.record(z.string().regex(/^\d+x\d+$/), atomicAmount),
  }),
  speech: z.object({
    perRequest: atomicAmount,
    perThousandChars: atomicAmount,
  }),
};

/**
 * Option names no catalog entry may pass to a provider: they would redirect or re-authenticate the call, or
 * change what the quote priced or checked (the model, the conversation or text, how many, how large, how
 * long, which voice or format). The API refuses them in a request whatever the catalog says.
 */
const NEVER_PASSED = new Set(
  'baseurl apikey header headers url endpoint organization project authorization fetch model messages prompt input text n size voice maxtokens maxcompletiontokens maxoutputtokens responseformat outputformat stream streamoptions'.split(' '),
);

/** Whether an option name is one of those, in any spelling (case, `_` or `-`: max_tokens, maxTokens, Max-Tokens). */
export function isNeverPassedOption(key: string): boolean {
  return NEVER_PASSED.has(key.toLowerCase().replace(/[_-]/g, ''));
}

const modelBase = {
  id: z.string().regex(/^[A-Za-z0-9._:/-]{1,100}$/),
  /** provider name: a key of `providers`, or one of the embedded engines */
  provider: z.string().min(1),
  /** the model id at the provider; defaults to `id` */
  upstreamModel: z.string().optional(),
  label: z.string().default(''),
  /** option keys a client may pass through in `options` */
  allowedOptions: z
    .array(z.string().refine((key) => !isNeverPassedOption(key), { error: (issue) => `${String(issue.input)} can never be passed as an option` }))
    .default([]),
  /** another model of the same capability to try when this one fails (never a pricier one) */
  fallback: z.string().optional(),
};

export const chatModel = z.object({
  ...modelBase,
  capability: z.literal('chat'),
  /** local-llama only: the GGUF file to run; default the built-in demo model */
  modelPath: z.string().optional(),
  maxTokens: z.number().int().positive(),
  defaultMaxTokens: z.number().int().positive(),
  /**
   * the largest prompt a request may send, in characters of all its messages plus PROMPT_CHARS_PER_MESSAGE for
   * each message (its role markers): set it from the model's context so a prompt that cannot fit is refused (400)
   * before any quote; unset, only the body limit bounds it
   */
  maxInputChars: z.number().int().positive().optional(),
  /**
   * what the model can honour beyond plain text (docs/agent-chat.md); a request using what it lacks is a 400
   * naming the field, before any price. Upstream defaults: tools, JSON schemas and streaming yes, images no.
   */
  supports: z
    .object({
      tools: z.boolean().default(true),
      jsonSchema: z.boolean().default(true),
      vision: z.boolean().default(false),
      streaming: z.boolean().default(true),
      /**
       * the model thinks before it answers (Anthropic's extended thinking, OpenAI's reasoning models): a request's
       * thinking and effort settings are passed to it and its thinking comes back; otherwise they are accepted and
       * ignored (X-Ignored-Fields). Off by default: a model that does not think would refuse them.
       */
      reasoning: z.boolean().default(false),
    })
    .strict()
    .prefault({}),
  /** prompt characters one image part counts as, in the quote and in maxInputChars (~750 tokens at 4 characters a token) */
  imageInputChars: z.number().int().nonnegative().default(3000),
  /**
   * under `upto`, the share of the prompt the model reports as read from its cache is charged at this percentage
   * of the input price (cache reads cost less upstream: OpenAI bills them at 10-50%, Anthropic at 10%)
   */
  cachedInputPercent: z.number().int().min(0).max(100).default(100),
  price: price.chat,
});
export const imageModel = z.object({
  ...modelBase,
  capability: z.literal('image'),
  sizes: z.array(z.string().regex(/^\d+x\d+$/)).min(1),
  defaultSize: z.string(),
  maxN: z.number().int().positive(),
  price: price.image,
});
const audioFormat = z.enum(AUDIO_FORMATS);
export const speechModel = z
  .object({
    ...modelBase,
    capability: z.literal('speech'),
    voices: z.array(z.string()).min(1),
    defaultVoice: z.string(),
    /** audio file formats a client may ask for; default: what the provider gives (see speechProviderFormats) */
    formats: z.array(audioFormat).min(1).optional(),
    /** default: the first of formats */
    defaultFormat: audioFormat.optional(),
    maxTextLength: z.number().int().positive(),
    price: price.speech,
  })
  .transform((model) => {
    const formats = model.formats ?? [...speechProviderFormats(model.provider).unlisted];
    return { ...model, formats, defaultFormat: model.defaultFormat ?? formats[0]! };
  });
export const modelConfig = z.discriminatedUnion('capability', [chatModel, imageModel, speechModel]);
export type ChatModelConfig = z.infer<typeof chatModel>;
export type ImageModelConfig = z.infer<typeof imageModel>;
export type SpeechModelConfig = z.infer<typeof speechModel>;
export type ModelConfig = z.infer<typeof modelConfig>;
export type Capability = ModelConfig['capability'];

export const catalogFields = {
  providers: z.record(z.string(), upstreamProvider).default({}),
  models: z.array(modelConfig).optional(),
  defaults: z
    .object({ chat: z.string(), image: z.string(), speech: z.string() })
    .partial()
    .default({}),
};
