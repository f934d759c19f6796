// node bench/image-check.ts: what checking a paid image costs, our own engine's PNG before and after issue 18
// (item 4): decoded whole by sharp as a provider's output is (inspectImage) vs read from its header
// (ownPngFacts), beside the engine's own drawing time, same process, rounds interleaved. Sizes: the bench's
// paid call (256x256) and the largest square the engine offers (1024x1024). BENCH_IMAGE_ROUNDS (5) rounds of
// BENCH_IMAGE_ITERATIONS (40) checks each.
import { inspectImage, ownPngFacts } from '../src/media/inspect-image.ts';
import { PreviewImageModel } from '../src/providers/local/preview-image-model.ts';
import { envNumber } from './env-number.ts';

const ROUNDS = envNumber('BENCH_IMAGE_ROUNDS', 5);
const ITERATIONS = envNumber('BENCH_IMAGE_ITERATIONS', 40);
const engine = new PreviewImageModel();

async function draw(size: string, prompt: string): Promise<Uint8Array> {
  const { images } = await engine.doGenerate({ prompt, n: 1, size: size as `${number}x${number}`, providerOptions: {} } as never);
  return images[0] as Uint8Array;
}

/** mean milliseconds per call of `task` over ITERATIONS calls, one at a time */
async function meanMs(task: (i: number) => unknown): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < ITERATIONS; i++) await task(i);
  return (performance.now() - started) / ITERATIONS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`image check per paid image (median of ${ROUNDS} interleaved rounds of ${ITERATIONS})`);
console.log('size        draw (engine)   decoded whole (before)   header read (after)');
for (const size of ['256x256', '1024x1024']) {
  const image = await draw(size, 'a lighthouse at dusk');
  if (ownPngFacts(image)?.width !== Number(size.split('x')[0]) || !(await inspectImage(image, size))) throw new Error('the check refused our own image');
  const drawMs: number[] = [];
  const decodeMs: number[] = [];
  const headerMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    drawMs.push(await meanMs((i) => draw(size, `prompt ${round} ${i}`)));
    decodeMs.push(await meanMs(() => inspectImage(image, size)));
    headerMs.push(await meanMs(() => ownPngFacts(image)));
  }
  const ms = (values: number[]) => `${median(values).toFixed(3)} ms`.padEnd(25);
  console.log(`${size.padEnd(12)}${ms(drawMs).slice(0, 16)}${ms(decodeMs)}${ms(headerMs)}`);
}
