// Times the embedded speech and image engines (speech in each output format, and the MP3/Ogg encoders
// alone) and checks that memory settles over repeated calls.
// Run: npx node --expose-gc src/providers/local/measure-local-engines.ts [calls=50]
import { experimental_generateSpeech as generateSpeech, generateImage } from 'ai';
import { EspeakSpeechModel } from './espeak-speech-model.ts';
import { ESPEAK_SPEECH_ENGINE } from '../../config/engines.ts';
import { PreviewImageModel } from './preview-image-model.ts';
import { parseWav } from '../../media/wav.ts';
import { ENCODED_FORMATS, encodeWav } from './audio-encoder.ts';

const calls = Number(process.argv[2] ?? 50);
const speech = new EspeakSpeechModel();
const image = new PreviewImageModel();
const sentence = 'The quick brown fox jumps over the lazy dog.';
const paragraph = 'Speech synthesis turns written words into sound, one small resonance at a time. '.repeat(13).slice(0, 1000);

const gc = (globalThis as { gc?: () => void }).gc ?? (() => console.warn('run with --expose-gc for memory figures'));
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

async function time(label: string, runs: number, job: () => Promise<unknown>): Promise<void> {
  await job(); // warm-up: loading and compiling are one-off costs
  // The longest gap between 1 ms ticks is how long a call keeps the event loop from other requests.
  let stall = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await job();
    times.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 2)); // lets the ticker see a job that never yields
  }
  clearInterval(ticker);
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`${label}: median ${median.toFixed(0)} ms, max ${times.at(-1)!.toFixed(0)} ms, longest event-loop stall ${stall.toFixed(0)} ms`);
}

/** Memory after each block of `calls` calls: growth that stops is caching, growth that goes on is a leak. */
async function memory(label: string, job: () => Promise<unknown>): Promise<void> {
  await job();
  gc();
  const figures = [process.memoryUsage()];
  for (let block = 0; block < 3; block++) {
    for (let i = 0; i < calls; i++) await job();
    gc();
    figures.push(process.memoryUsage());
  }
  const show = (key: 'rss' | 'heapUsed' | 'external') => figures.map((m) => mb(m[key])).join(' -> ');
  console.log(`${label}, memory every ${calls} calls (MB): rss ${show('rss')}; heap ${show('heapUsed')}; external ${show('external')}`);
}

const coldStart = performance.now();
const first = await generateSpeech({ model: speech, text: sentence });
console.log(`first TTS call (compiles the WebAssembly): ${(performance.now() - coldStart).toFixed(0)} ms`);
console.log(`sentence: ${sentence.length} chars -> ${parseWav(first.audio.uint8Array).durationSeconds.toFixed(2)} s of audio`);
const long = await generateSpeech({ model: speech, text: paragraph });
console.log(`paragraph: ${paragraph.length} chars -> ${parseWav(long.audio.uint8Array).durationSeconds.toFixed(2)} s of audio`);

for (const outputFormat of ESPEAK_SPEECH_ENGINE.outputFormats) {
  await time(`TTS sentence, ${outputFormat}`, 10, () => generateSpeech({ model: speech, text: sentence, outputFormat }));
  await time(`TTS 1000-char paragraph, ${outputFormat}`, 10, () => generateSpeech({ model: speech, text: paragraph, outputFormat }));
}
// The encoders alone, here on the main thread (so the stall figure is the encoding time itself; the gateway
// encodes on the speech worker).
for (const format of ENCODED_FORMATS) {
  await time(`encode only, sentence -> ${format}`, 10, () => encodeWav(first.audio.uint8Array, format));
  await time(`encode only, 1000-char paragraph -> ${format}`, 10, () => encodeWav(long.audio.uint8Array, format));
}
await time('image 512x512', 10, () => generateImage({ model: image, prompt: 'a red fox in the snow', size: '512x512' }));
await time('image 1024x1024', 5, () => generateImage({ model: image, prompt: 'a red fox in the snow', size: '1024x1024' }));

let i = 0;
await memory('TTS sentence', () => generateSpeech({ model: speech, text: `${sentence} ${i++}` }));
await memory('TTS sentence, mp3', () => generateSpeech({ model: speech, text: `${sentence} ${i++}`, outputFormat: 'mp3' }));
await memory('image 512x512', () => generateImage({ model: image, prompt: `a red fox ${i++}`, size: '512x512' }));
