// The embedded engines behind the local provider names: llama.cpp for chat, eSpeak NG for speech,
// and the preview renderer for images. Models are created once per catalog entry and load lazily.
import type { Config } from '../../config/load.ts';
import type { LocalEngines } from '../registry.ts';
import { LlamaChatModel } from './llama-chat-model.ts';
import { createDemoChatModel } from './local-chat-catalog.ts';

export function createLocalEngines(config: Config): LocalEngines {
  const chatModels = new Map<string, LlamaChatModel>();
  return {
    chat(model) {
      let instance = chatModels.get(model.id);
      if (!instance) {
        instance = model.modelPath
          ? new LlamaChatModel({ modelId: model.id, modelPath: model.modelPath, defaultMaxOutputTokens: model.defaultMaxTokens })
          : createDemoChatModel({ dataDir: config.dataDir });
        chatModels.set(model.id, instance);
      }
      return instance;
    },
    image() {
      throw new Error('preview image engine not wired yet');
    },
    speech() {
      throw new Error('speech engine not wired yet');
    },
  };
}
