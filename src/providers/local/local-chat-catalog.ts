// The out-of-the-box (offline) chat model: what it is, its limits, and how to build it.

import { join } from 'node:path';
import { ensureDemoChatModel } from './bigram-chat-gguf.ts';
import { DEMO_CHAT_MODEL, type LocalChatModelDescription } from '../../config/engines.ts';
import { LlamaChatModel, type LlamaChatModelConfig } from './llama-chat-model.ts';

/** calls the demo model generates at once (llama.cpp sequences of one context) */
const DEMO_CHAT_PARALLEL = 4;

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
    // four calls generate at once, evaluated together: the model is tiny, so more sequences cost next to no
    // memory, and batching them served ~1.4x the short calls of two on 2 cores (bench/channels.ts, work alone)
    parallel: DEMO_CHAT_PARALLEL,
    ...rest,
    modelId: DEMO_CHAT_MODEL.id,
    modelPath: demoChatModelPath(dataDir),
    prepare: ensureDemoChatModel,
  });
}
