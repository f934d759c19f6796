// Audio file formats a speech model can be asked for (the API's `format`, the AI SDK's `outputFormat`),
// each with the media type of the file it gives: what the AI SDK detects from the bytes, and so what the
// media store keeps and GET /media serves.
import { ESPEAK_SPEECH_ENGINE } from './local/espeak-speech-model.ts';
import type { AudioContainer } from '../media/inspect-audio.ts';

export const AUDIO_MEDIA_TYPES = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  /** Ogg Vorbis */
  ogg: 'audio/ogg',
  /** Ogg Opus, as OpenAI's speech API sends it */
  opus: 'audio/ogg',
  /** ADTS */
  aac: 'audio/aac',
  flac: 'audio/flac',
} as const;

export type AudioFormat = keyof typeof AUDIO_MEDIA_TYPES;

/** What the bytes of each format are, as media/inspect-audio.ts recognises them. */
export const AUDIO_CONTAINERS: Record<AudioFormat, AudioContainer> = {
  wav: 'wav',
  mp3: 'mp3',
  ogg: 'ogg-vorbis',
  opus: 'ogg-opus',
  aac: 'aac',
  flac: 'flac',
};
export const AUDIO_FORMATS = Object.keys(AUDIO_MEDIA_TYPES) as [AudioFormat, ...AudioFormat[]];

/**
 * What a speech provider can produce (`supported`) and what a catalog entry offers when its config lists
 * no formats (`unlisted`, first = the default).
 */
export function speechProviderFormats(provider: string): { supported: readonly AudioFormat[]; unlisted: readonly AudioFormat[] } {
  if (provider === ESPEAK_SPEECH_ENGINE.provider) {
    return { supported: ESPEAK_SPEECH_ENGINE.outputFormats, unlisted: ESPEAK_SPEECH_ENGINE.outputFormats };
  }
  // An OpenAI-compatible /audio/speech through @ai-sdk/openai, which sends `response_format` only for these
  // (anything else silently becomes mp3). Unlisted: mp3 only, what such a model gave before formats existed.
  return { supported: ['mp3', 'opus', 'aac', 'flac', 'wav'], unlisted: ['mp3'] };
}
