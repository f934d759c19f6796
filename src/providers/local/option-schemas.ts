// The typed options of each embedded engine, by its provider name (upstream options are the upstream's to
// check): what the API validates a request's `options` against, and what a catalog entry may allow.
import type { EngineOptionsSchema } from './engine-options.ts';
import { LLAMA_CHAT_ENGINE } from './llama-chat-model.ts';
import { PREVIEW_IMAGE_ENGINE } from './preview-image-model.ts';
import { ESPEAK_SPEECH_ENGINE } from './espeak-speech-model.ts';

export const LOCAL_OPTION_SCHEMAS: Readonly<Record<string, EngineOptionsSchema>> = {
  [LLAMA_CHAT_ENGINE.provider]: LLAMA_CHAT_ENGINE.options,
  [PREVIEW_IMAGE_ENGINE.provider]: PREVIEW_IMAGE_ENGINE.options,
  [ESPEAK_SPEECH_ENGINE.provider]: ESPEAK_SPEECH_ENGINE.options,
};
