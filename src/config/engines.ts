// The embedded engines as a catalog sees them: ids, honest labels, limits, voices, sizes, the audio formats a
// speech model can give and the options each engine reads. Data only: the engines (providers/local/) read their
// own facts from here, and the config checks a catalog against them, so config knows nothing of the providers' code.
import { z } from 'zod';
import { ESPEAK_DEFAULT_VOICE, ESPEAK_VOICES } from './espeak-voices.ts';

export type EngineOptionsSchema = z.ZodObject;

export const seedOption = z.number().int().min(0).max(2 ** 31 - 1).describe('same seed, same request: the same output');

export const AUDIO_MEDIA_TYPES = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  /** Ogg Vorbis */
  ogg: 'audio/ogg',
  /** Ogg Opus, as OpenAI's speech API sends it */
  opus: 'audio/ogg',
  /** ADTS */
  aac: 'audio/aac',
  flac: 'audio/flac',
} as const;

export type AudioFormat = keyof typeof AUDIO_MEDIA_TYPES;
export const AUDIO_FORMATS = Object.keys(AUDIO_MEDIA_TYPES) as [AudioFormat, ...AudioFormat[]];

/** the demo chat model's GGUF file: its name and construction version (cached files are rebuilt when it changes) */
export const DEMO_CHAT_MODEL_NAME = 'gateway-demo-bigram';
/** bump when the construction or the corpus changes, so cached files are rebuilt */
export const DEMO_CHAT_MODEL_VERSION = 1;
export const DEMO_CHAT_CONTEXT_LENGTH = 2048;
/** the largest prompt the demo chat model takes, in characters */
export const DEMO_CHAT_MAX_INPUT_CHARS = 1_000_000;

export interface LocalChatModelDescription {
  /** catalog id clients send as `model` */
  id: string;
  /** provider name in the config's `models[].provider` */
  provider: 'local';
  /** honest one-line description of what the model is and how good it is */
  label: string;
  /** tokens of context (prompt + answer) the engine gives each request */
  contextSize: number;
  /** most output tokens a request may ask for (the limit a surface clamps a larger max_tokens to) */
  maxTokens: number;
  /** output tokens when the request does not say */
  defaultMaxTokens: number;
  /** the largest prompt (the catalog's maxInputChars) taken; what the context cannot hold is cut from the start */
  maxInputChars: number;
  /** file name of the generated GGUF under `<dataDir>/models/` */
  fileName: string;
}

/**
 * A word-bigram Markov chain (about 400 words and punctuation marks, trained on ~1,150 words of
 * original text in demo-chat-corpus.ts) packed as a 1-layer llama-architecture GGUF of ~2.9 MB,
 * generated deterministically on first use and run by llama.cpp. It is not an instruct model.
 */
export const DEMO_CHAT_MODEL: LocalChatModelDescription = {
  id: 'local/demo-bigram',
  provider: 'local',
  label:
    'Offline demo: tiny word-bigram model run by llama.cpp (~400-word vocabulary, trained on a few pages of text). ' +
    'Does not understand the prompt; replies are fluent-looking nonsense. For trying the gateway, not for answers.',
  contextSize: DEMO_CHAT_CONTEXT_LENGTH,
  maxTokens: 512,
  defaultMaxTokens: 128,
  // a coding agent's prompt (Claude Code's first request is 50-90 KB, and a session grows past 256 KB): only its
  // last ~1,500 tokens reach the context (providers/local/llama-chat-convert.ts), so the cost per call stays
  // bounded; the characters are priced as sent
  maxInputChars: DEMO_CHAT_MAX_INPUT_CHARS,
  fileName: `${DEMO_CHAT_MODEL_NAME}-v${DEMO_CHAT_MODEL_VERSION}.gguf`,
};

/** The engine's provider name in the catalog, the key of its providerOptions, and what `options` may set. */
export const LLAMA_CHAT_ENGINE = {
  provider: 'local-llama',
  options: z.object({ seed: seedOption }).partial().strict(),
} as const;

/** What a model catalog needs to know about this engine. */
export const PREVIEW_IMAGE_ENGINE = {
  id: 'preview-image',
  /** provider name: the key of this engine's `providerOptions` */
  provider: 'local-preview',
  label: 'Deterministic abstract renderer seeded by the prompt (gradients and shapes, PNG), not an AI model: a preview of the image flow.',
  sizes: ['256x256', '512x512', '1024x1024', '1024x768', '768x1024'],
  defaultSize: '512x512',
  maxN: 4,
  mediaType: 'image/png',
  /** what `options` may set */
  options: z.object({ seed: seedOption }).partial().strict(),
} as const;

/** what eSpeak NG gives: WAV, or WAV encoded as MP3 or Ogg Vorbis (providers/local/audio-encoder.ts) */
const ESPEAK_OUTPUT_FORMATS = ['wav', 'mp3', 'ogg'] as const;

/** What a model catalog needs to know about this engine. */
export const ESPEAK_SPEECH_ENGINE = {
  id: 'espeak-ng',
  /** provider name: the key of this engine's `providerOptions` */
  provider: 'local-espeak',
  label:
    'eSpeak NG formant synthesizer, offline; robotic but intelligible. 22.05 kHz mono: WAV (16-bit PCM), MP3 (48 kbit/s) or Ogg Vorbis.',
  voices: ESPEAK_VOICES,
  defaultVoice: ESPEAK_DEFAULT_VOICE,
  /** longest text one call takes (~4 minutes of speech at the default rate) */
  maxTextLength: 4000,
  /** `outputFormat` values; the first is the default */
  outputFormats: ESPEAK_OUTPUT_FORMATS,
  /** what `options` may set: speed 1 = normal (175 words a minute), pitch 0-99 (50 = normal) */
  options: z
    .object({
      speed: z.number().min(0.5).max(2.5).describe('1 = normal; the range eSpeak NG speaks at'),
      pitch: z.number().int().min(0).max(99).describe('50 = normal'),
    })
    .partial()
    .strict(),
} as const;

/** The options each embedded engine reads, by provider name: what a request's `options` is checked against. */
export const LOCAL_OPTION_SCHEMAS: Readonly<Record<string, EngineOptionsSchema>> = {
  [LLAMA_CHAT_ENGINE.provider]: LLAMA_CHAT_ENGINE.options,
  [PREVIEW_IMAGE_ENGINE.provider]: PREVIEW_IMAGE_ENGINE.options,
  [ESPEAK_SPEECH_ENGINE.provider]: ESPEAK_SPEECH_ENGINE.options,
};

/**
 * What a speech provider can produce (`supported`) and what a catalog entry offers when its config lists
 * no formats (`unlisted`, first = the default).
 */
export function speechProviderFormats(provider: string): { supported: readonly AudioFormat[]; unlisted: readonly AudioFormat[] } {
  if (provider === ESPEAK_SPEECH_ENGINE.provider) {
    return { supported: ESPEAK_SPEECH_ENGINE.outputFormats, unlisted: ESPEAK_SPEECH_ENGINE.outputFormats };
  }
  // An OpenAI-compatible /audio/speech through @ai-sdk/openai, which sends `response_format` only for these
  // (anything else silently becomes mp3). Unlisted: mp3 only, what such a model gave before formats existed.
  return { supported: ['mp3', 'opus', 'aac', 'flac', 'wav'], unlisted: ['mp3'] };
}
