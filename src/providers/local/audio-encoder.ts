// Encodes a 16-bit PCM WAV file (what eSpeak NG writes) as MP3 (LAME) or Ogg Vorbis with the
// wasm-media-encoders package: both encoders are WebAssembly, so nothing native is downloaded.
// Encoding is blocking work; the speech engine calls this on its worker thread (espeak-worker.ts).
import type { WasmMediaEncoder } from 'wasm-media-encoders';
import { parseWav, WavFormatError } from '../../media/wav.ts';

export const ENCODED_FORMATS = ['mp3', 'ogg'] as const;
export type EncodedFormat = (typeof ENCODED_FORMATS)[number];

type Encoder = WasmMediaEncoder<'audio/mpeg'> | WasmMediaEncoder<'audio/ogg'>;

/** Samples handed to the encoder per call: bounds its WebAssembly memory, which never shrinks. */
const CHUNK_SAMPLES = 1 << 16;

const MP3_SAMPLE_RATES = new Set([8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]);

// One instance per format and thread, compiled on first use; configure() resets it for each file,
// and a file is encoded in one synchronous run, so calls never interleave on an instance.
const encoders = new Map<EncodedFormat, Promise<Encoder>>();

function encoderFor(format: EncodedFormat): Promise<Encoder> {
  let encoder = encoders.get(format);
  if (!encoder) {
    // Loaded on first use, on the thread that encodes: the package inlines both WebAssembly binaries (~780 KB).
    encoder = import('wasm-media-encoders').then(
      ({ createMp3Encoder, createOggEncoder }): Promise<Encoder> => (format === 'mp3' ? createMp3Encoder() : createOggEncoder()),
    );
    encoder.catch(() => encoders.delete(format)); // let a later call try again
    encoders.set(format, encoder);
  }
  return encoder;
}

function configure(encoder: Encoder, format: EncodedFormat, channels: 1 | 2, sampleRate: number): void {
  if (format === 'mp3') {
    if (!MP3_SAMPLE_RATES.has(sampleRate)) throw new WavFormatError(`MP3 cannot carry ${sampleRate} Hz`);
    // Constant bitrate: players seek by byte offset without a seek table. 48 kbit/s keeps 22.05 kHz mono
    // speech clear; the output rate is pinned to the input's so LAME never resamples.
    (encoder as WasmMediaEncoder<'audio/mpeg'>).configure({
      channels,
      sampleRate,
      bitrate: 48,
      outputSampleRate: sampleRate as 22050,
    });
  } else {
    // A fixed stream serial number (the default is random) makes the same speech give the same bytes.
    (encoder as WasmMediaEncoder<'audio/ogg'>).configure({ channels, sampleRate, vbrQuality: 3, oggSerialNo: 1 });
  }
}

/** The WAV's samples as the encoders take them: one Float32Array per channel, in [-1, 1). */
function planarSamples(wav: Uint8Array): { channels: Float32Array[]; sampleRate: number } {
  const info = parseWav(wav);
  if (info.format !== 1 || info.bitsPerSample !== 16 || (info.channels !== 1 && info.channels !== 2)) {
    throw new WavFormatError('only 16-bit PCM, mono or stereo, can be encoded');
  }
  const frames = Math.floor(info.dataLength / (2 * info.channels));
  const view = new DataView(wav.buffer, wav.byteOffset + info.dataOffset, frames * 2 * info.channels);
  const channels = Array.from({ length: info.channels }, () => new Float32Array(frames));
  for (let frame = 0, offset = 0; frame < frames; frame++) {
    for (const channel of channels) {
      channel[frame] = view.getInt16(offset, true) / 32768;
      offset += 2;
    }
  }
  return { channels, sampleRate: info.sampleRate };
}

/** The WAV file encoded as an MP3 file or an Ogg Vorbis file. */
export async function encodeWav(wav: Uint8Array, format: EncodedFormat): Promise<Uint8Array> {
  const { channels, sampleRate } = planarSamples(wav);
  const encoder = await encoderFor(format);
  configure(encoder, format, channels.length as 1 | 2, sampleRate);
  const parts: Uint8Array[] = [];
  const frames = channels[0]!.length;
  // encode() and finalize() return views into the encoder's memory: each is copied before the next call.
  for (let start = 0; start < frames; start += CHUNK_SAMPLES) {
    parts.push(encoder.encode(channels.map((channel) => channel.subarray(start, start + CHUNK_SAMPLES))).slice());
  }
  parts.push(encoder.finalize().slice());
  return concat(parts);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
