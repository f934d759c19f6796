import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeWav } from './audio-encoder.ts';
import { synthesizeWav } from './espeak-wasm.ts';
import { fixWavSizes, parseWav, WavFormatError } from '../../media/wav.ts';
import {
  AudioStreamError,
  bestCorrelation,
  decodeMp3,
  decodeOggVorbis,
  parseMpegFrames,
  parseOggVorbis,
} from '../../../test/support/audio-streams.ts';

/** A 16-bit PCM WAV file of the samples (interleaved when channels > 1). */
function pcmWav(samples: Int16Array, sampleRate: number, channels = 1, bitsPerSample = 16): Uint8Array {
  const bytes = new Uint8Array(44 + samples.byteLength);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string) => bytes.set(new TextEncoder().encode(text), offset);
  ascii(0, 'RIFF');
  view.setUint32(4, bytes.length - 8, true);
  ascii(8, 'WAVEfmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * (bitsPerSample / 8), true);
  view.setUint16(32, channels * (bitsPerSample / 8), true);
  view.setUint16(34, bitsPerSample, true);
  ascii(36, 'data');
  view.setUint32(40, samples.byteLength, true);
  bytes.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength), 44);
  return bytes;
}

/** A 440 Hz tone of the given length at 22.05 kHz, the rate eSpeak writes. */
function tone(seconds: number): Uint8Array {
  const samples = Int16Array.from({ length: Math.round(seconds * 22050) }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 22050)));
  return pcmWav(samples, 22050);
}

function floatSamples(wav: Uint8Array): Float32Array {
  const info = parseWav(wav);
  const view = new DataView(wav.buffer, wav.byteOffset + info.dataOffset, info.dataLength);
  return Float32Array.from({ length: info.dataLength / 2 }, (_, i) => view.getInt16(i * 2, true) / 32768);
}

const speech = fixWavSizes(await synthesizeWav({ text: 'The quick brown fox jumps over the lazy dog.', voice: 'en-us' }));
const speechSeconds = parseWav(speech).durationSeconds;

test('MP3: MPEG-2 Layer III frames at a constant 48 kbit/s, 22.05 kHz mono, as long as the speech', async () => {
  const mp3 = await encodeWav(speech, 'mp3');
  const stream = parseMpegFrames(mp3);
  assert.deepEqual([stream.sampleRate, stream.channels, stream.samplesPerFrame, [...stream.bitrates]], [22050, 1, 576, [48]]);
  // LAME adds its encoder delay (1,105 samples) and pads the last frame
  const extra = stream.durationSeconds - speechSeconds;
  assert.ok(extra >= 0 && extra < 0.15, `${stream.durationSeconds} s of frames for ${speechSeconds} s of speech`);
});

test('MP3: mpg123 decodes it to the same sound, shifted by the encoder delay', async () => {
  const decoded = await decodeMp3(await encodeWav(speech, 'mp3'));
  assert.equal(decoded.sampleRate, 22050);
  const { correlation, delay } = bestCorrelation(floatSamples(speech), decoded.samples, 2000);
  assert.ok(correlation > 0.95, `correlation ${correlation}`);
  assert.ok(delay > 500 && delay < 1700, `delay ${delay}`);
});

test('Ogg: checksummed pages with the Vorbis headers, whose last granule position is the speech length to the sample', async () => {
  const ogg = await encodeWav(speech, 'ogg');
  const stream = parseOggVorbis(ogg);
  assert.deepEqual([stream.sampleRate, stream.channels], [22050, 1]);
  assert.equal(stream.durationSeconds, speechSeconds);
});

test('Ogg: libvorbis decodes it to the same sound, sample for sample', async () => {
  const decoded = await decodeOggVorbis(await encodeWav(speech, 'ogg'));
  assert.equal(decoded.sampleRate, 22050);
  assert.equal(decoded.samples.length, floatSamples(speech).length);
  const { correlation, delay } = bestCorrelation(floatSamples(speech), decoded.samples, 10);
  assert.ok(correlation > 0.95, `correlation ${correlation}`);
  assert.equal(delay, 0);
});

test('the duration read from each stream follows the length of the audio', async () => {
  for (const seconds of [0.5, 3, 12]) {
    const wav = tone(seconds);
    const mp3 = parseMpegFrames(await encodeWav(wav, 'mp3')).durationSeconds;
    const ogg = parseOggVorbis(await encodeWav(wav, 'ogg')).durationSeconds;
    assert.ok(mp3 >= seconds && mp3 < seconds + 0.15, `mp3 ${mp3} s for ${seconds} s`);
    assert.ok(Math.abs(ogg - seconds) < 0.001, `ogg ${ogg} s for ${seconds} s`);
  }
});

test('the same audio gives the same bytes (the Ogg stream serial number is fixed)', async () => {
  for (const format of ['mp3', 'ogg'] as const) {
    assert.deepEqual(await encodeWav(speech, format), await encodeWav(speech, format));
  }
});

test('stereo is encoded as stereo', async () => {
  const samples = new Int16Array(22050 * 2).map((_, i) => (i % 2 === 0 ? 4000 : -4000) * Math.sin(i / 20));
  const wav = pcmWav(samples, 22050, 2);
  assert.equal(parseMpegFrames(await encodeWav(wav, 'mp3')).channels, 2);
  assert.equal(parseOggVorbis(await encodeWav(wav, 'ogg')).channels, 2);
});

test('what the encoders cannot take is refused', async () => {
  await assert.rejects(encodeWav(new Uint8Array(100), 'mp3'), WavFormatError);
  await assert.rejects(encodeWav(pcmWav(new Int16Array(300), 22050, 3), 'ogg'), /16-bit PCM, mono or stereo/);
  await assert.rejects(encodeWav(pcmWav(new Int16Array(300), 22050, 1, 8), 'mp3'), /16-bit PCM/);
  await assert.rejects(encodeWav(pcmWav(new Int16Array(300), 22000), 'mp3'), /MP3 cannot carry 22000 Hz/);
});

test('the stream checks catch damage (so a pass means something)', async () => {
  const mp3 = await encodeWav(speech, 'mp3');
  assert.throws(() => parseMpegFrames(mp3.subarray(0, mp3.length - 10)), /runs past the end/);
  assert.throws(() => parseMpegFrames(mp3.subarray(1)), /no frame sync/);
  assert.throws(() => parseMpegFrames(speech), AudioStreamError);

  const ogg = await encodeWav(speech, 'ogg');
  const flipped = ogg.slice();
  flipped[ogg.length - 5]! ^= 1;
  assert.throws(() => parseOggVorbis(flipped), /bad checksum/);
  assert.throws(() => parseOggVorbis(ogg.subarray(0, ogg.length - 1)), /runs past the end/);
  assert.throws(() => parseOggVorbis(mp3), /no Ogg page/);
});
