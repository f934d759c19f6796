import { test } from 'node:test';
import assert from 'node:assert/strict';
// ai@7 runs `generateSpeech` under this name too; its type declarations only export this one.
import { experimental_generateSpeech as generateSpeech } from 'ai';
import { EspeakSpeechModel } from './espeak-speech-model.ts';
import { ESPEAK_SPEECH_ENGINE } from '../../config/engines.ts';
import { parseWav } from '../../media/wav.ts';
import { parseMpegFrames, parseOggVorbis } from '../../../test/support/audio-streams.ts';

const model = new EspeakSpeechModel();

const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const PARAGRAPH =
  'Speech synthesis turns written words into sound. This engine is a formant synthesizer: it does not ' +
  'replay recordings of a human voice but builds each vowel and consonant from a handful of resonances, ' +
  'which is why it sounds robotic. In exchange it is tiny, fast, needs no model weights at all, and speaks ' +
  'dozens of languages without a network connection.';

test('speaks a sentence as a 16-bit mono WAV file', async () => {
  const { audio, providerMetadata } = await generateSpeech({ model, text: SENTENCE });
  assert.equal(audio.mediaType, 'audio/wav');
  const bytes = audio.uint8Array;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'RIFF');
  assert.equal(view.getUint32(4, true), bytes.length - 8); // RIFF size matches the file
  assert.equal(new TextDecoder().decode(bytes.subarray(8, 12)), 'WAVE');

  const wav = parseWav(bytes);
  assert.deepEqual([wav.format, wav.channels, wav.sampleRate, wav.bitsPerSample], [1, 1, 22050, 16]);
  assert.ok(wav.durationSeconds > 1.5 && wav.durationSeconds < 6, `a sentence lasts ${wav.durationSeconds} s`);
  assert.equal(providerMetadata[ESPEAK_SPEECH_ENGINE.provider]?.['voice'], ESPEAK_SPEECH_ENGINE.defaultVoice);
});

test('a paragraph lasts clearly longer than a sentence', async () => {
  const short = parseWav((await generateSpeech({ model, text: SENTENCE })).audio.uint8Array);
  const long = parseWav((await generateSpeech({ model, text: PARAGRAPH })).audio.uint8Array);
  assert.ok(long.durationSeconds > 4 * short.durationSeconds, `${long.durationSeconds} s vs ${short.durationSeconds} s`);
});

test('speed 2 speaks faster', async () => {
  const normal = parseWav((await generateSpeech({ model, text: PARAGRAPH })).audio.uint8Array);
  const fast = parseWav((await generateSpeech({ model, text: PARAGRAPH, speed: 2 })).audio.uint8Array);
  assert.ok(fast.durationSeconds < 0.7 * normal.durationSeconds, `${fast.durationSeconds} s vs ${normal.durationSeconds} s`);
});

test('every listed voice speaks, and voices differ', async () => {
  const sizes = new Map<string, number>();
  for (const voice of ESPEAK_SPEECH_ENGINE.voices) {
    const { audio } = await generateSpeech({ model, text: 'One, two, three.', voice });
    const wav = parseWav(audio.uint8Array);
    assert.ok(wav.durationSeconds > 0.5, `${voice}: ${wav.durationSeconds} s`);
    sizes.set(voice, audio.uint8Array.length);
  }
  const a = await generateSpeech({ model, text: SENTENCE, voice: 'en-us' });
  const b = await generateSpeech({ model, text: SENTENCE, voice: 'en-us+f3' });
  assert.notDeepEqual(a.audio.uint8Array, b.audio.uint8Array);
});

test('an unknown voice is refused with the list of voices', async () => {
  await assert.rejects(generateSpeech({ model, text: SENTENCE, voice: 'klingon' }), (error: Error) => {
    assert.equal(error.name, 'AI_InvalidArgumentError');
    assert.match(error.message, /unknown eSpeak NG voice "klingon"; voices: en, en-us/);
    return true;
  });
  await assert.rejects(generateSpeech({ model, text: SENTENCE, voice: 'en+nosuchvariant' }), /unknown eSpeak NG voice/);
});

test('outputFormat mp3 and ogg give an MP3 and an Ogg Vorbis file, whose streams last as long as the speech', async () => {
  const wav = parseWav((await generateSpeech({ model, text: SENTENCE, outputFormat: 'wav' })).audio.uint8Array);
  const mp3 = await generateSpeech({ model, text: SENTENCE, outputFormat: 'mp3' });
  const ogg = await generateSpeech({ model, text: SENTENCE, outputFormat: 'ogg' });
  // the AI SDK names the media type from the bytes
  assert.deepEqual([mp3.audio.mediaType, ogg.audio.mediaType], ['audio/mpeg', 'audio/ogg']);
  const mp3Seconds = parseMpegFrames(mp3.audio.uint8Array).durationSeconds;
  assert.ok(mp3Seconds >= wav.durationSeconds && mp3Seconds < wav.durationSeconds + 0.15, `${mp3Seconds} s vs ${wav.durationSeconds} s`);
  assert.equal(parseOggVorbis(ogg.audio.uint8Array).durationSeconds, wav.durationSeconds);
  const metadata = mp3.providerMetadata[ESPEAK_SPEECH_ENGINE.provider];
  assert.deepEqual([metadata?.['format'], metadata?.['durationSeconds']], ['mp3', Math.round(wav.durationSeconds * 1000) / 1000]);
});

test('MP3 and Ogg durations grow with the text', async () => {
  const seconds = async (text: string) => {
    const mp3 = (await generateSpeech({ model, text, outputFormat: 'mp3' })).audio.uint8Array;
    const ogg = (await generateSpeech({ model, text, outputFormat: 'ogg' })).audio.uint8Array;
    return { mp3: parseMpegFrames(mp3).durationSeconds, ogg: parseOggVorbis(ogg).durationSeconds };
  };
  const short = await seconds(SENTENCE);
  const long = await seconds(PARAGRAPH);
  assert.ok(long.mp3 > 4 * short.mp3, `mp3: ${long.mp3} s vs ${short.mp3} s`);
  assert.ok(long.ogg > 4 * short.ogg, `ogg: ${long.ogg} s vs ${short.ogg} s`);
});

test('empty text, too long text and other formats are refused', async () => {
  await assert.rejects(generateSpeech({ model, text: '   ' }), /text is empty/);
  await assert.rejects(generateSpeech({ model, text: 'a'.repeat(ESPEAK_SPEECH_ENGINE.maxTextLength + 1) }), /at most 4000/);
  await assert.rejects(generateSpeech({ model, text: SENTENCE, outputFormat: 'opus' }), /"opus" is not available.*formats: wav, mp3, ogg/);
});

test('text that looks like a command-line option is spoken, not obeyed', async () => {
  const { audio } = await generateSpeech({ model, text: '--help -v de' });
  assert.ok(parseWav(audio.uint8Array).durationSeconds > 0.5);
});

test('concurrent calls give the same audio as one at a time, print nothing, leave the exit code alone', async () => {
  // formats mixed, two MP3s among them: the worker's encoders are shared between calls
  const calls = [
    { text: SENTENCE, outputFormat: 'mp3' },
    { text: PARAGRAPH, outputFormat: 'ogg' },
    { text: 'Hello.', outputFormat: 'wav' },
    { text: 'Bonjour tout le monde.', outputFormat: 'mp3' },
  ];
  const alone = [];
  for (const call of calls) alone.push((await generateSpeech({ model, ...call })).audio.uint8Array);

  const written: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof write;
  let together;
  try {
    together = await Promise.all(calls.map((call) => generateSpeech({ model, ...call })));
  } finally {
    process.stdout.write = write;
  }
  assert.deepEqual(
    together.map((r) => r.audio.uint8Array),
    alone,
  );
  assert.deepEqual(written, []);
  assert.equal(process.exitCode, undefined);
});

test('the formats the catalog offers are WAV and those the encoder makes', async () => {
  const { ENCODED_FORMATS } = await import('./audio-encoder.ts');
  assert.deepEqual([...ESPEAK_SPEECH_ENGINE.outputFormats], ['wav', ...ENCODED_FORMATS]);
});
