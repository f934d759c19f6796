// POST /v1/audio/speech: OpenAI's speech request run as /api/v1/ai/tts runs it (same model, voices,
// formats, price, checks and media store), answered as OpenAI answers: the audio bytes with their
// Content-Type. The file is kept with the payment: the body kept (and shown to the payer by
// GET /api/v1/payments/:id) names its URL, which the answer also gives as Content-Location.
import { ttsEndpoint } from '../tts.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { withFallback } from '../fallback.ts';
import type { TtsResponse } from '../schemas.ts';
import { parseRequest } from '../validate.ts';
import { RequestNotes } from '../request-notes.ts';
import type { MediaStore } from '../../media/media-store.ts';
import { ApiError } from '../../errors.ts';
import { OPENAI_VOICES, openaiSpeechRequestSchema, SPEECH_FIELD_RULES } from './schemas.ts';
import { withFieldNames } from '../request-fields.ts';

/** What is kept with the payment: where the audio is, so it can be answered again. */
export interface KeptSpeech {
  object: 'audio.speech';
  model: string;
  url: string;
  media_id: string;
}

export function prepareSpeech(body: unknown, context: EndpointContext): PreparedCall {
  const notes = new RequestNotes();
  const request = parseRequest(openaiSpeechRequestSchema, body, { style: 'brackets', notes, rules: SPEECH_FIELD_RULES });
  const spec = {
    model: request.model,
    text: request.input,
    voice: request.voice,
    format: request.response_format,
    ...(request.speed === undefined ? {} : { options: { speed: request.speed } }),
  };
  const prepare = (asked: typeof spec) =>
    withFieldNames({ text: 'input', format: 'response_format', 'options.speed': 'speed' }, () => withFallback(ttsEndpoint, asked, context, ttsEndpoint.prepare(asked, context)));
  let prepared: PreparedCall;
  try {
    prepared = prepare(spec);
  } catch (error) {
    // OpenAI's SDK makes every caller name a voice: one of OpenAI's that the model lacks is its default voice
    if (!(error instanceof ApiError && error.field === 'voice' && OPENAI_VOICES.has(spec.voice ?? ''))) throw error;
    notes.ignore('voice');
    prepared = prepare({ ...spec, voice: undefined });
  }
  return {
    ...prepared,
    notes,
    async run() {
      const result = await prepared.run();
      const kept: KeptSpeech = { object: 'audio.speech', model: prepared.model.id, url: (result.body as TtsResponse).audioUrl, media_id: result.media[0]! };
      return { ...result, body: kept };
    },
  };
}

/** The kept audio file as the answer. */
export async function deliverSpeech(media: MediaStore, body: unknown, headers: Record<string, string>): Promise<Response> {
  const kept = body as KeptSpeech;
  const info = await media.info(kept.media_id);
  if (!info) throw new ApiError(404, 'not_found', 'the audio of this payment is no longer kept');
  return new Response(await media.read(kept.media_id), {
    status: 200,
    headers: { ...headers, 'Content-Type': info.contentType, 'Content-Length': String(info.size), 'Content-Location': kept.url },
  });
}
