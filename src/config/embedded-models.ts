// The catalog served with no configuration: offline engines only, each labelled for what it is.
// Limits come from the engines' own descriptions; prices are the operator's choice, in USDC atomic units.
import type { ModelConfig } from './schema.ts';
import { DEMO_CHAT_MODEL, ESPEAK_SPEECH_ENGINE, PREVIEW_IMAGE_ENGINE } from './engines.ts';

/** per image, by size: roughly proportional to the pixel count */
const PREVIEW_IMAGE_PRICES: Record<string, string> = {
  '256x256': '2000',
  '512x512': '5000',
  '1024x1024': '10000',
  '1024x768': '8000',
  '768x1024': '8000',
};

export function embeddedModels(): ModelConfig[] {
  return [
    {
      id: DEMO_CHAT_MODEL.id,
      capability: 'chat',
      provider: 'local-llama',
      label: DEMO_CHAT_MODEL.label,
      allowedOptions: ['seed'],
      maxTokens: DEMO_CHAT_MODEL.maxTokens,
      defaultMaxTokens: DEMO_CHAT_MODEL.defaultMaxTokens,
      maxInputChars: DEMO_CHAT_MODEL.maxInputChars,
      // tools and JSON schemas by constrained decoding (providers/local/answer-plan.ts); no image input
      supports: { tools: true, jsonSchema: true, vision: false, streaming: true, reasoning: false },
      imageInputChars: 3000,
      cachedInputPercent: 100,
      price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '500' },
    },
    {
      id: PREVIEW_IMAGE_ENGINE.id,
      capability: 'image',
      provider: 'local-preview',
      label: PREVIEW_IMAGE_ENGINE.label,
      allowedOptions: ['seed'],
      sizes: [...PREVIEW_IMAGE_ENGINE.sizes],
      defaultSize: PREVIEW_IMAGE_ENGINE.defaultSize,
      maxN: PREVIEW_IMAGE_ENGINE.maxN,
      price: { perImageBySize: PREVIEW_IMAGE_PRICES },
    },
    {
      id: ESPEAK_SPEECH_ENGINE.id,
      capability: 'speech',
      provider: 'local-espeak',
      label: ESPEAK_SPEECH_ENGINE.label,
      allowedOptions: ['speed', 'pitch'],
      voices: [...ESPEAK_SPEECH_ENGINE.voices],
      defaultVoice: ESPEAK_SPEECH_ENGINE.defaultVoice,
      formats: [...ESPEAK_SPEECH_ENGINE.outputFormats],
      defaultFormat: ESPEAK_SPEECH_ENGINE.outputFormats[0]!,
      maxTextLength: ESPEAK_SPEECH_ENGINE.maxTextLength,
      price: { perRequest: '1000', perThousandChars: '2000' },
    },
  ];
}
