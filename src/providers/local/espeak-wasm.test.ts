import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EspeakError, synthesizeWav } from './espeak-wasm.ts';
import { parseWav } from '../../media/wav.ts';

test('writes a WAV file for the text', async () => {
  const wav = parseWav(await synthesizeWav({ text: 'Testing, one, two.', voice: 'en' }));
  assert.equal(wav.sampleRate, 22050);
  assert.ok(wav.durationSeconds > 0.5);
});

test("eSpeak's own errors become an EspeakError, and the process exit code stays untouched", async () => {
  await assert.rejects(synthesizeWav({ text: 'Hello', voice: 'zz' }), (error: Error) => {
    assert.ok(error instanceof EspeakError);
    assert.equal(error.message, 'The specified espeak-ng voice does not exist.');
    return true;
  });
  assert.equal(process.exitCode, undefined);
  // the next call is not affected
  assert.ok(parseWav(await synthesizeWav({ text: 'Still here.', voice: 'en' })).durationSeconds > 0.3);
});

test('an aborted call does not start', async () => {
  await assert.rejects(synthesizeWav({ text: 'Hello', voice: 'en' }, AbortSignal.abort()), { name: 'AbortError' });
});
