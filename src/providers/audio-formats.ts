// What the bytes of each audio format a speech model can be asked for are (the formats and their media types
// are the config's, config/engines.ts): what media/inspect-audio.ts checks a speech result against.
import type { AudioFormat } from '../config/engines.ts';
import type { AudioContainer } from '../media/inspect-audio.ts';

/** What the bytes of each format are, as media/inspect-audio.ts recognises them. */
export const AUDIO_CONTAINERS: Record<AudioFormat, AudioContainer> = {
  wav: 'wav',
  mp3: 'mp3',
  ogg: 'ogg-vorbis',
  opus: 'ogg-opus',
  aac: 'aac',
  flac: 'flac',
};
