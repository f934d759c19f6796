// The catalog served with no configuration: offline engines only, each labelled for what it is.
import type { ModelConfig } from './schema.ts';
import { DEMO_CHAT_MODEL } from '../providers/local/local-chat-catalog.ts';

export function embeddedModels(): ModelConfig[] {
  return [
    {
      id: DEMO_CHAT_MODEL.id,
      capability: 'chat',
      provider: 'local-llama',
      label: DEMO_CHAT_MODEL.label,
      allowedOptions: ['top_p', 'top_k', 'seed'],
      maxTokens: DEMO_CHAT_MODEL.maxTokens,
      defaultMaxTokens: DEMO_CHAT_MODEL.defaultMaxTokens,
      price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '500' },
    },
    {
      id: 'preview-image',
      capability: 'image',
      provider: 'local-preview',
      label: 'Deterministic abstract renderer seeded by the prompt: a preview, not an AI model',
      allowedOptions: [],
      sizes: ['256x256', '512x512', '1024x1024', '1024x768', '768x1024'],
      defaultSize: '512x512',
      maxN: 4,
      price: {
        perImageBySize: {
          '256x256': '2000',
          '512x512': '5000',
          '1024x1024': '10000',
          '1024x768': '8000',
          '768x1024': '8000',
        },
      },
    },
    {
      id: 'espeak-ng',
      capability: 'speech',
      provider: 'local-espeak',
      label: 'eSpeak NG formant synthesizer, offline: robotic but intelligible, WAV output',
      allowedOptions: ['speed'],
      voices: ['en', 'en-us', 'en-gb', 'de', 'fr', 'es', 'it', 'pt'],
      defaultVoice: 'en',
      maxTextLength: 4000,
      price: { perRequest: '1000', perThousandChars: '2000' },
    },
  ];
}
