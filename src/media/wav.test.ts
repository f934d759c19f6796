import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixWavSizes, parseWav, WavFormatError } from './wav.ts';

/** A 44-byte header of 16-bit mono PCM followed by `samples` zero samples. */
function wav(sampleRate: number, samples: number, riffSize: number, dataSize: number): Uint8Array {
  const bytes = new Uint8Array(44 + samples * 2);
  const view = new DataView(bytes.buffer);
  bytes.set(new TextEncoder().encode('RIFF'), 0);
  view.setUint32(4, riffSize, true);
  bytes.set(new TextEncoder().encode('WAVEfmt '), 8);
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  bytes.set(new TextEncoder().encode('data'), 36);
  view.setUint32(40, dataSize, true);
  return bytes;
}

test('reads the format and the duration from the data size', () => {
  const info = parseWav(wav(8000, 4000, 36 + 8000, 8000));
  assert.deepEqual(info, { format: 1, channels: 1, sampleRate: 8000, bitsPerSample: 16, dataOffset: 44, dataLength: 8000, durationSeconds: 0.5 });
});

test('a streaming placeholder size counts only the bytes present, and fixWavSizes writes the real sizes', () => {
  const bytes = wav(8000, 800, 0x7fffffff, 0x7fffffff);
  assert.equal(parseWav(bytes).durationSeconds, 0.1);
  const fixed = new DataView(fixWavSizes(bytes).buffer);
  assert.equal(fixed.getUint32(4, true), 36 + 1600);
  assert.equal(fixed.getUint32(40, true), 1600);
});

test('anything else is refused', () => {
  assert.throws(() => parseWav(new TextEncoder().encode('ID3 not a wav file')), WavFormatError);
});
