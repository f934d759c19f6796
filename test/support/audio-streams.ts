// Checks for encoded audio, written from the format specifications rather than taken from the encoder:
// an MP3 must be MPEG audio Layer III frames back to back from the first byte to the last, an Ogg Vorbis
// file Ogg pages (checksums verified) carrying the three Vorbis headers. Each yields the duration its
// stream declares (frame count, last granule position), and decode*() decode it with independent
// WebAssembly decoders (mpg123, libvorbis) to compare the sound with what was encoded.
import { MPEGDecoder } from 'mpg123-decoder';
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { oggPageCrc } from '../../src/media/inspect-audio.ts';

export class AudioStreamError extends Error {
  override name = 'AudioStreamError';
}

export interface MpegStream {
  frames: number;
  sampleRate: number;
  channels: number;
  /** 1152 for MPEG-1, 576 for MPEG-2 and 2.5 */
  samplesPerFrame: number;
  /** kbit/s of every frame; one value for a constant-bitrate file */
  bitrates: Set<number>;
  /** samples per frame × audio frames / sample rate */
  durationSeconds: number;
}

// Layer III tables (ISO 11172-3, 13818-3): index 0 is "free format", 15 is invalid
const MPEG1_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** Walks an MP3 file frame by frame; throws AudioStreamError at the first byte that is not a frame. */
export function parseMpegFrames(bytes: Uint8Array): MpegStream {
  let offset = 0;
  let frames = 0;
  let format: { sampleRate: number; channels: number; samplesPerFrame: number } | undefined;
  const bitrates = new Set<number>();
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw new AudioStreamError(`truncated frame header at byte ${offset}`);
    const [b0, b1, b2, b3] = [bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!, bytes[offset + 3]!];
    if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) throw new AudioStreamError(`no frame sync at byte ${offset}`);
    const version = (b1 >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
    const layer = (b1 >> 1) & 3; // 1 = Layer III
    const bitrateIndex = b2 >> 4;
    const rateIndex = (b2 >> 2) & 3;
    if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) {
      throw new AudioStreamError(`not a Layer III frame header at byte ${offset}`);
    }
    const mpeg1 = version === 3;
    const kbps = (mpeg1 ? MPEG1_KBPS : MPEG2_KBPS)[bitrateIndex]!;
    const sampleRate = SAMPLE_RATES[version]![rateIndex]!;
    const channels = b3 >> 6 === 3 ? 1 : 2;
    const samplesPerFrame = mpeg1 ? 1152 : 576;
    const length = Math.floor(((samplesPerFrame / 8) * kbps * 1000) / sampleRate) + ((b2 >> 1) & 1);
    if (offset + length > bytes.length) throw new AudioStreamError(`frame at byte ${offset} runs past the end`);
    format ??= { sampleRate, channels, samplesPerFrame };
    if (format.sampleRate !== sampleRate || format.channels !== channels) {
      throw new AudioStreamError(`frame at byte ${offset} changes the sample rate or channels`);
    }
    // A Xing/Info tag frame (seek table, gapless info) holds no audio.
    const sideInfo = mpeg1 ? (channels === 1 ? 17 : 32) : channels === 1 ? 9 : 17;
    const tagAt = offset + 4 + ((b1 & 1) === 0 ? 2 : 0) + sideInfo;
    const tag = String.fromCharCode(...bytes.subarray(tagAt, tagAt + 4));
    if (!(frames === 0 && bitrates.size === 0 && (tag === 'Xing' || tag === 'Info'))) {
      frames++;
      bitrates.add(kbps);
    }
    offset += length;
  }
  if (!format || frames === 0) throw new AudioStreamError('no audio frame');
  return { frames, ...format, bitrates, durationSeconds: (frames * format.samplesPerFrame) / format.sampleRate };
}

export interface OggVorbisStream {
  pages: number;
  sampleRate: number;
  channels: number;
  /** granule position of the last page (samples per channel) / sample rate */
  durationSeconds: number;
}


const BEGINNING = 2;
const END = 4;

/**
 * Walks an Ogg file page by page (RFC 3533): capture pattern, version, checksum, one logical stream with
 * consecutive page numbers, beginning and end flags. Its first packets must be the Vorbis identification,
 * comment and setup headers, the first alone on the first page (Vorbis I specification, section 4.2).
 */
export function parseOggVorbis(bytes: Uint8Array): OggVorbisStream {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const packets: Uint8Array[] = [];
  let partial: number[] = [];
  let offset = 0;
  let pages = 0;
  let serial: number | undefined;
  let granule = 0n;
  let flags = 0;
  while (offset < bytes.length) {
    if (offset + 27 > bytes.length || String.fromCharCode(...bytes.subarray(offset, offset + 4)) !== 'OggS') {
      throw new AudioStreamError(`no Ogg page at byte ${offset}`);
    }
    if (bytes[offset + 4] !== 0) throw new AudioStreamError(`page ${pages}: unknown Ogg version`);
    if (flags & END) throw new AudioStreamError(`page ${pages}: follows the end-of-stream page`);
    flags = bytes[offset + 5]!;
    if (Boolean(flags & BEGINNING) !== (pages === 0)) throw new AudioStreamError(`page ${pages}: beginning-of-stream flag misplaced`);
    if (pages > 0 && serial !== view.getUint32(offset + 14, true)) throw new AudioStreamError(`page ${pages}: another stream`);
    serial = view.getUint32(offset + 14, true);
    if (view.getUint32(offset + 18, true) !== pages) throw new AudioStreamError(`page ${pages}: out of sequence`);
    const segments = bytes[offset + 26]!;
    const table = bytes.subarray(offset + 27, offset + 27 + segments);
    const end = offset + 27 + segments + table.reduce((sum, size) => sum + size, 0);
    if (table.length < segments || end > bytes.length) throw new AudioStreamError(`page ${pages} runs past the end`);
    if (oggPageCrc(bytes.subarray(offset, end)) !== view.getUint32(offset + 22, true)) throw new AudioStreamError(`page ${pages}: bad checksum`);
    const position = view.getBigInt64(offset + 6, true);
    if (position !== -1n) {
      if (position < granule) throw new AudioStreamError(`page ${pages}: granule position goes back`);
      granule = position;
    }
    let body = offset + 27 + segments;
    for (const size of table) {
      partial.push(...bytes.subarray(body, body + size));
      body += size;
      if (size < 255) {
        packets.push(Uint8Array.from(partial));
        partial = [];
      }
    }
    if (pages === 0 && (packets.length !== 1 || partial.length > 0 || position !== 0n)) {
      throw new AudioStreamError('the first page must hold the identification header alone');
    }
    offset = end;
    pages++;
  }
  if (pages === 0 || (flags & END) === 0) throw new AudioStreamError('no end-of-stream page');
  const headers = packets.slice(0, 3).map((packet) => `${packet[0]}${String.fromCharCode(...packet.subarray(1, 7))}`);
  if (headers.join(' ') !== '1vorbis 3vorbis 5vorbis') throw new AudioStreamError(`not the Vorbis headers: ${headers.join(' ')}`);
  const ident = new DataView(packets[0]!.buffer);
  if (packets[0]!.length !== 30 || ident.getUint32(7, true) !== 0 || (packets[0]![29]! & 1) !== 1) {
    throw new AudioStreamError('malformed Vorbis identification header');
  }
  const channels = ident.getUint8(11);
  const sampleRate = ident.getUint32(12, true);
  if (channels === 0 || sampleRate === 0) throw new AudioStreamError('Vorbis identification header without channels or rate');
  return { pages, sampleRate, channels, durationSeconds: Number(granule) / sampleRate };
}

export interface DecodedAudio {
  /** the first channel */
  samples: Float32Array;
  sampleRate: number;
}

export async function decodeMp3(bytes: Uint8Array): Promise<DecodedAudio> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const decoded = decoder.decode(bytes);
    if (decoded.errors.length > 0) throw new AudioStreamError(`mpg123: ${decoded.errors[0]!.message}`);
    return { samples: decoded.channelData[0]!.slice(0, decoded.samplesDecoded), sampleRate: decoded.sampleRate };
  } finally {
    decoder.free();
  }
}

export async function decodeOggVorbis(bytes: Uint8Array): Promise<DecodedAudio> {
  const decoder = new OggVorbisDecoder();
  await decoder.ready;
  try {
    const decoded = await decoder.decodeFile(bytes);
    if (decoded.errors.length > 0) throw new AudioStreamError(`libvorbis: ${decoded.errors[0]!.message}`);
    return { samples: decoded.channelData[0]!.slice(0, decoded.samplesDecoded), sampleRate: decoded.sampleRate };
  } finally {
    decoder.free();
  }
}

/**
 * The highest normalized correlation between the original and the decoded signal over delays of 0 to
 * maxDelay samples (an MP3 encoder and decoder add a fixed delay), with the delay that gives it.
 */
export function bestCorrelation(original: Float32Array, decoded: Float32Array, maxDelay: number): { correlation: number; delay: number } {
  let best = { correlation: -1, delay: 0 };
  for (let delay = 0; delay <= maxDelay; delay++) {
    const length = Math.min(original.length, decoded.length - delay);
    let dot = 0;
    let a2 = 0;
    let b2 = 0;
    for (let i = 0; i < length; i++) {
      const a = original[i]!;
      const b = decoded[i + delay]!;
      dot += a * b;
      a2 += a * a;
      b2 += b * b;
    }
    const correlation = dot / Math.sqrt(a2 * b2 || 1);
    if (correlation > best.correlation) best = { correlation, delay };
  }
  return best;
}
