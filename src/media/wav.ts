// Reading and tidying RIFF/WAVE PCM files: enough to check what a speech engine produced and to
// report its duration without decoding samples.

export interface WavInfo {
  /** 1 = integer PCM */
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** byte offset of the first sample */
  dataOffset: number;
  /** bytes of sample data actually present in the file */
  dataLength: number;
  durationSeconds: number;
}

export class WavFormatError extends Error {
  override name = 'WavFormatError';
}

function ascii(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + 4));
}

/** Walks the chunks of a WAV file; throws WavFormatError when it is not one. */
export function parseWav(bytes: Uint8Array): WavInfo {
  if (bytes.length < 12 || ascii(bytes, 0) !== 'RIFF' || ascii(bytes, 8) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt: Pick<WavInfo, 'format' | 'channels' | 'sampleRate' | 'bitsPerSample'> | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = ascii(bytes, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ' && size >= 16) {
      fmt = {
        format: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (!fmt) throw new WavFormatError('data chunk before fmt chunk');
      if (fmt.channels === 0 || fmt.sampleRate === 0 || fmt.bitsPerSample === 0) throw new WavFormatError('empty format');
      // Streaming writers leave a placeholder size; what is in the file is what counts.
      const dataLength = Math.min(size, bytes.length - body);
      const bytesPerSecond = fmt.sampleRate * fmt.channels * (fmt.bitsPerSample / 8);
      return { ...fmt, dataOffset: body, dataLength, durationSeconds: dataLength / bytesPerSecond };
    }
    offset = body + size + (size % 2); // chunks are word aligned
  }
  throw new WavFormatError('no data chunk');
}

/** Rewrites the RIFF and data sizes to match the bytes present (eSpeak leaves the RIFF size off). */
export function fixWavSizes(bytes: Uint8Array): Uint8Array {
  const info = parseWav(bytes);
  const fixed = bytes.slice(0, info.dataOffset + info.dataLength);
  const view = new DataView(fixed.buffer);
  view.setUint32(4, fixed.length - 8, true);
  view.setUint32(info.dataOffset - 4, info.dataLength, true);
  return fixed;
}
