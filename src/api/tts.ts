// POST /api/v1/ai/tts
import { ApiError } from '../errors.ts';
import { quoteSpeech } from '../pricing/quote.ts';
import { toUpstreamError } from '../providers/upstream-errors.ts';
import { loadAiSdk } from '../providers/ai-sdk.ts';
import { AUDIO_CONTAINERS } from '../providers/audio-formats.ts';
import { AUDIO_MEDIA_TYPES } from '../config/engines.ts';
import { inspectAudio } from '../media/inspect-audio.ts';
import { ttsRequestSchema, ttsResponseSchema, type TtsResponse } from './schemas.ts';
import { allowedOptions, exampleMediaUrl, type Endpoint } from './endpoint.ts';
import type { SpeechModelConfig } from '../config/schema.ts';
import { offeredOrThrow, parseOrThrow } from './validate.ts';
import { withCallTimeout } from '../lib/call-timeout.ts';
import { storeAll } from './store-media.ts';

export const ttsEndpoint: Endpoint = {
  path: '/api/v1/ai/tts',
  capability: 'speech',
  description: 'Convert text to speech',
  summary: 'Convert text to speech',
  requestSchema: ttsRequestSchema,
  responseSchema: ttsResponseSchema,
  example: (model, origin) => {
    const { defaultVoice, defaultFormat } = model as SpeechModelConfig;
    return {
      request: { model: model.id, text: 'Good morning', voice: defaultVoice, format: defaultFormat },
      response: { model: model.id, audioUrl: exampleMediaUrl(origin, AUDIO_MEDIA_TYPES[defaultFormat]) },
    };
  },
  prepare(body, { catalog, providers, media, mediaUrl }) {
    const request = parseOrThrow(ttsRequestSchema, body);
    const model = catalog.resolve('speech', request.model);
    if (request.text.length > model.maxTextLength) {
      throw new ApiError(400, 'invalid_request', `text: at most ${model.maxTextLength} characters for model ${model.id}`, {
        field: 'text',
      });
    }
    const voice = offeredOrThrow('voice', request.voice ?? model.defaultVoice, model.voices, model.id);
    const format = offeredOrThrow('format', request.format ?? model.defaultFormat, model.formats, model.id);
    const options = allowedOptions(model, request.options, providers.optionsSchema(model));
    return {
      model,
      amount: quoteSpeech(model, request.text.length),
      async run() {
        const settings = providers.settings(model);
        let audio: { uint8Array: Uint8Array; mediaType: string };
        const { generateSpeech } = await loadAiSdk();
        try {
          const result = await withCallTimeout(settings.timeoutMs, undefined, (abortSignal) =>
            generateSpeech({
              model: providers.speech(model),
              text: request.text,
              voice,
              outputFormat: format,
              providerOptions: { [settings.providerOptionsKey]: options },
              maxRetries: settings.maxRetries,
              abortSignal,
            }),
          );
          audio = result.audio;
        } catch (error) {
          throw toUpstreamError(error, model.id);
        }
        // What the bytes are, not what the provider says: an error page, nothing, or another format than the one
        // asked for (@ai-sdk/openai itself falls back to mp3) is never charged.
        const got = inspectAudio(audio.uint8Array);
        if (got !== AUDIO_CONTAINERS[format]) {
          const what = got ? `${got} audio` : 'something that is not audio';
          throw new ApiError(502, 'upstream_error', `model ${model.id} returned ${what}, not ${format}; nothing was charged`);
        }
        const ids = await storeAll(media, [{ uint8Array: audio.uint8Array, mediaType: AUDIO_MEDIA_TYPES[format] }]);
        const response: TtsResponse = { model: model.id, audioUrl: mediaUrl(ids[0]!) };
        return { body: response, media: ids };
      },
    };
  },
};
