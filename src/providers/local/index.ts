// The embedded engines behind the local provider names: llama.cpp for chat, eSpeak NG for speech,
// and the preview renderer for images. One model object per catalog entry, created on first use.
import type { Config } from '../../config/load.ts';
import type { LocalEngines } from '../registry.ts';
import { LlamaChatModel } from './llama-chat-model.ts';
import { createDemoChatModel } from './local-chat-catalog.ts';
import { EspeakSpeechModel } from './espeak-speech-model.ts';
import { PreviewImageModel } from './preview-image-model.ts';
import { perModel } from '../per-model.ts';

export function createLocalEngines(config: Config): LocalEngines {
  return {
    chat: perModel((model) =>
      model.modelPath
        ? new LlamaChatModel({ modelId: model.id, modelPath: model.modelPath, defaultMaxOutputTokens: model.defaultMaxTokens })
        : createDemoChatModel({ dataDir: config.dataDir }),
    ),
    image: perModel((model) => new PreviewImageModel({ modelId: model.id, defaultSize: model.defaultSize })),
    speech: perModel(
      (model) => new EspeakSpeechModel({ modelId: model.id, defaultVoice: model.defaultVoice, maxTextLength: model.maxTextLength }),
    ),
  };
}
