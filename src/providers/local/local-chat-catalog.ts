// The out-of-the-box (offline) chat model: what it is, its limits, and how to build it.

import { join } from 'node:path';
import { ensureDemoChatModel } from './bigram-chat-gguf.ts';
import { DEMO_CHAT_MODEL, type LocalChatModelDescription } from '../../config/engines.ts';
import { LlamaChatModel, type LlamaChatModelConfig } from './llama-chat-model.ts';

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
