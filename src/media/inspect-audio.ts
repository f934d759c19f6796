// What a model hands back as speech is recognised from its bytes before it is stored or paid for: an
// upstream can answer 200 with a JSON error, an empty body, a file cut short or another format than was
// asked for. The check walks the container, as a player would, without decoding the audio: a WAV whose data
// is all there (or whose writer left its length open, as streaming servers do), MPEG audio or ADTS frames
// each whole, from the first to the last (tags or padding may follow), Ogg pages each whole with a valid
// checksum up to the end-of-stream page, holding Vorbis or Opus; FLAC by its stream header only.
import { parseWav } from './wav.ts';

export type AudioContainer = 'wav' | 'mp3' | 'ogg-vorbis' | 'ogg-opus' | 'flac' | 'aac';

const ascii = (bytes: Uint8Array, from: number, length: number) => String.fromCharCode(...bytes.subarray(from, from + length));

/** What the bytes are, or undefined when they are no whole audio file of a kind we serve. */
export function inspectAudio(bytes: Uint8Array): AudioContainer | undefined {
  if (bytes.length < 12) return undefined;
  if (ascii(bytes, 0, 4) === 'RIFF') return wholeWav(bytes) ? 'wav' : undefined;
  if (ascii(bytes, 0, 4) === 'OggS') return oggStream(bytes);
  if (ascii(bytes, 0, 4) === 'fLaC') return bytes[4]! & 0x7f ? undefined : 'flac'; // STREAMINFO comes first
  const start = afterId3(bytes);
  if (wholeFrames(bytes, start, mpegFrameLength)) return 'mp3';
  if (wholeFrames(bytes, start, adtsFrameLength)) return 'aac';
  return undefined;
}

/** Samples, and all of them: a data length of 0 or 0xFFFFFFFF is a writer that did not know it. */
function wholeWav(bytes: Uint8Array): boolean {
  try {
    const wav = parseWav(bytes);
    const declared = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(wav.dataOffset - 4, true);
    const open = declared === 0 || declared === 0xffffffff;
    return open ? bytes.length > wav.dataOffset : wav.dataLength > 0 && wav.dataLength === declared;
  } catch {
    return false;
  }
}

/** Skips an ID3v2 tag (its size is four 7-bit bytes), as MP3 files often begin with one. */
function afterId3(bytes: Uint8Array): number {
  if (ascii(bytes, 0, 3) !== 'ID3') return 0;
  return 10 + (((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f));
}

/**
 * Frames back to back from `start`, at least two (a frame sync alone occurs in any data) or one that ends
 * the file, none cut short. What follows the last one may be a tag or padding, but not the start of a frame.
 */
function wholeFrames(bytes: Uint8Array, start: number, frameLength: (bytes: Uint8Array, at: number) => number): boolean {
  let at = start;
  let frames = 0;
  for (let length = frameLength(bytes, at); length > 0; length = frameLength(bytes, at)) {
    if (at + length > bytes.length) return false; // the last frame is cut
    at += length;
    frames++;
  }
  const rest = bytes.length - at;
  if (rest > 0 && rest < 8 && bytes[at] === 0xff) return false; // cut inside a frame header
  return frames >= 2 || (frames === 1 && rest === 0);
}

// MPEG audio (ISO 11172-3, 13818-3), layers I-III: bitrate (kbit/s) by [MPEG-1?][layer][index]
const KBPS: Record<string, number[]> = {
  '1-3': [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  '1-2': [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  '1-1': [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '2-3': [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  '2-2': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-1': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** Length of the MPEG audio frame whose header is at `at` (it may run past the end), 0 when there is none. */
function mpegFrameLength(bytes: Uint8Array, at: number): number {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return 0;
  const version = (bytes[at + 1]! >> 3) & 3; // 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5
  const layer = (bytes[at + 1]! >> 1) & 3; // 3 = layer I, 2 = II, 1 = III
  const bitrateIndex = bytes[at + 2]! >> 4;
  const rateIndex = (bytes[at + 2]! >> 2) & 3;
  if (version === 1 || layer === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return 0;
  const kbps = KBPS[`${version === 3 ? 1 : 2}-${layer}`]![bitrateIndex]!;
  const rate = RATES[version]![rateIndex]!;
  const padding = (bytes[at + 2]! >> 1) & 1;
  const length =
    layer === 3
      ? (Math.floor((12 * kbps * 1000) / rate) + padding) * 4
      : Math.floor(((layer === 1 && version !== 3 ? 72 : 144) * kbps * 1000) / rate) + padding;
  return length;
}

/** Length of the ADTS (AAC) frame whose header is at `at` (it may run past the end), 0 when there is none. */
function adtsFrameLength(bytes: Uint8Array, at: number): number {
  if (at + 7 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xf6) !== 0xf0) return 0;
  const length = ((bytes[at + 3]! & 0x03) << 11) | (bytes[at + 4]! << 3) | (bytes[at + 5]! >> 5);
  return length >= 7 ? length : 0;
}

// Ogg page checksum (RFC 3533): CRC-32, polynomial 0x04c11db7, not reflected, initial 0, no final XOR
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let crc = n << 24;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  return crc >>> 0;
});

/** The checksum of one whole Ogg page, its own checksum field (bytes 22-25) counted as zeros. */
export function oggPageCrc(page: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < page.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ (i >= 22 && i < 26 ? 0 : page[i]!)) & 0xff]!) >>> 0;
  return crc;
}

/**
 * The codec of an Ogg file: every page whole with a valid checksum, the first opening the stream with its
 * codec's header, the last closing it (a file cut short has no end-of-stream page).
 */
function oggStream(bytes: Uint8Array): AudioContainer | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let codec: AudioContainer | undefined;
  let flags = 0;
  for (let at = 0; at < bytes.length; ) {
    if (at + 27 > bytes.length || ascii(bytes, at, 4) !== 'OggS' || bytes[at + 4] !== 0) return undefined;
    const segments = bytes[at + 26]!;
    let end = at + 27 + segments;
    if (end > bytes.length) return undefined;
    for (let i = 0; i < segments; i++) end += bytes[at + 27 + i]!;
    if (end > bytes.length) return undefined;
    if (oggPageCrc(bytes.subarray(at, end)) !== view.getUint32(at + 22, true)) return undefined;
    flags = bytes[at + 5]!;
    if (at === 0) {
      const packet = 27 + segments;
      if ((flags & 2) === 0) return undefined; // beginning of stream
      codec = bytes[packet] === 1 && ascii(bytes, packet + 1, 6) === 'vorbis' ? 'ogg-vorbis' : ascii(bytes, packet, 8) === 'OpusHead' ? 'ogg-opus' : undefined;
      if (!codec) return undefined;
    }
    at = end;
  }
  return flags & 4 ? codec : undefined; // end of stream
}
