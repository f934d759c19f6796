import { test } from 'node:test';
import assert from 'node:assert/strict';
import { synthesizeWavInWorker } from './espeak-thread.ts';
import { EspeakError } from './espeak-wasm.ts';
import { parseWav } from './wav.ts';

const PARAGRAPH = 'Timers keep firing while the worker speaks. '.repeat(22);

test('the event loop keeps turning while speech is synthesized', async () => {
  await synthesizeWavInWorker({ text: 'warm up', voice: 'en' });
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const started = performance.now();
  const wavs = await Promise.all([1, 2, 3].map(() => synthesizeWavInWorker({ text: PARAGRAPH, voice: 'en' })));
  const elapsed = performance.now() - started;
  clearInterval(ticker);
  assert.ok(wavs.every((wav) => parseWav(wav).durationSeconds > 20));
  // Blocking the main thread for the whole time would leave no tick at all.
  assert.ok(ticks > elapsed / 10, `${ticks} ticks in ${elapsed.toFixed(0)} ms`);
});

test('an abort rejects the call at once; the worker goes on serving', async () => {
  const controller = new AbortController();
  const call = synthesizeWavInWorker({ text: PARAGRAPH, voice: 'en' }, controller.signal);
  controller.abort();
  await assert.rejects(call, { name: 'AbortError' });
  assert.ok(parseWav(await synthesizeWavInWorker({ text: 'Next.', voice: 'en' })).durationSeconds > 0.2);
});

test("eSpeak's errors come back as EspeakError", async () => {
  await assert.rejects(synthesizeWavInWorker({ text: 'Hello', voice: 'zz' }), EspeakError);
});
