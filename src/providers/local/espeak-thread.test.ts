import { test } from 'node:test';
import assert from 'node:assert/strict';
import { speakInWorker } from './espeak-thread.ts';
import { EspeakError } from './espeak-wasm.ts';
import { parseWav } from '../../media/wav.ts';
import { parseMpegFrames, parseOggVorbis } from '../../../test/support/audio-streams.ts';

const PARAGRAPH = 'Timers keep firing while the worker speaks. '.repeat(22);

test('the event loop keeps turning while speech is synthesized and encoded', async () => {
  await speakInWorker({ text: 'warm up', voice: 'en' }, 'mp3');
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const started = performance.now();
  // one of each format: encoding runs on the worker too
  const files = await Promise.all((['wav', 'mp3', 'ogg'] as const).map((format) => speakInWorker({ text: PARAGRAPH, voice: 'en' }, format)));
  const elapsed = performance.now() - started;
  clearInterval(ticker);
  assert.ok(files.every((file) => file.durationSeconds > 20));
  assert.equal(parseWav(files[0]!.bytes).durationSeconds, files[0]!.durationSeconds);
  assert.equal(parseMpegFrames(files[1]!.bytes).sampleRate, 22050);
  assert.equal(parseOggVorbis(files[2]!.bytes).durationSeconds, files[2]!.durationSeconds);
  // Blocking the main thread for the whole time would leave no tick at all.
  assert.ok(ticks > elapsed / 10, `${ticks} ticks in ${elapsed.toFixed(0)} ms`);
});

test('an abort rejects the call at once; the worker goes on serving', async () => {
  const controller = new AbortController();
  const call = speakInWorker({ text: PARAGRAPH, voice: 'en' }, 'ogg', controller.signal);
  controller.abort();
  await assert.rejects(call, { name: 'AbortError' });
  assert.ok(parseWav((await speakInWorker({ text: 'Next.', voice: 'en' }, 'wav')).bytes).durationSeconds > 0.2);
});

test("eSpeak's errors come back as EspeakError", async () => {
  await assert.rejects(speakInWorker({ text: 'Hello', voice: 'zz' }, 'mp3'), EspeakError);
});
