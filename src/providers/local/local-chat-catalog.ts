// The out-of-the-box (offline) chat model: what it is, its limits, and how to build it.

import { join } from 'node:path';
import {
  DEMO_CHAT_CONTEXT_LENGTH,
  DEMO_CHAT_MODEL_NAME,
  DEMO_CHAT_MODEL_VERSION,
  ensureDemoChatModel,
} from './bigram-chat-gguf.ts';
import { LlamaChatModel, type LlamaChatModelConfig } from './llama-chat-model.ts';

export interface LocalChatModelDescription {
  /** catalog id clients send as `model` */
  id: string;
  /** provider name in the config's `models[].provider` */
  provider: 'local';
  /** honest one-line description of what the model is and how good it is */
  label: string;
  /** tokens of context (prompt + answer) the engine gives each request */
  contextSize: number;
  /** most output tokens a request may ask for */
  maxTokens: number;
  /** output tokens when the request does not say */
  defaultMaxTokens: number;
  /** the largest prompt (the catalog's maxInputChars) sure to fit in the context */
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
  // every token covers at least one UTF-8 byte (byte fallback), so a character is at most 4 tokens, and so is a
  // message's 16-character allowance (its markers take ~4); 16 tokens are kept for the template's own
  maxInputChars: Math.floor((DEMO_CHAT_CONTEXT_LENGTH - 16) / 4),
  fileName: `${DEMO_CHAT_MODEL_NAME}-v${DEMO_CHAT_MODEL_VERSION}.gguf`,
};

/** Every chat model the local engine offers without configuration. */
export const LOCAL_CHAT_MODELS: readonly LocalChatModelDescription[] = [DEMO_CHAT_MODEL];

/** Path of the demo model's GGUF file under the data directory. */
export function demoChatModelPath(dataDir: string): string {
  return join(dataDir, 'models', DEMO_CHAT_MODEL.fileName);
}

/** The demo chat model; its GGUF file is written under `dataDir` on first use if absent. */
export function createDemoChatModel(
  options: { dataDir: string } & Partial<Omit<LlamaChatModelConfig, 'modelId' | 'modelPath' | 'prepare'>>,
): LlamaChatModel {
  const { dataDir, ...rest } = options;
  return new LlamaChatModel({
    defaultMaxOutputTokens: DEMO_CHAT_MODEL.defaultMaxTokens,
    contextSize: DEMO_CHAT_MODEL.contextSize,
    ...rest,
    modelId: DEMO_CHAT_MODEL.id,
    modelPath: demoChatModelPath(dataDir),
    prepare: ensureDemoChatModel,
  });
}
