// Measures the local llama.cpp chat engine: load time, tokens/second (one call, and concurrent
// calls), and memory. Usage: node scripts/bench-local-chat.ts [model.gguf]
// Without an argument it measures the built-in demo model (generated into a temp dir).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText } from 'ai';
import { LlamaChatModel } from '../src/providers/local/llama-chat-model.ts';
import { createDemoChatModel } from '../src/providers/local/local-chat-catalog.ts';

const dir = await mkdtemp(join(tmpdir(), 'bench-local-chat-'));
const path = process.argv[2];
const model = path
  ? new LlamaChatModel({ modelId: 'bench', modelPath: path, parallel: 2 })
  : createDemoChatModel({ dataDir: dir, parallel: 2 });
const rssBefore = process.memoryUsage().rss;
let t = performance.now();
const info = await model.info();
const loadMs = performance.now() - t;

async function run(calls: number, concurrency: number) {
  let tokens = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        const seed = next++;
        const r = await generateText({ model, prompt: 'Tell me something.', maxOutputTokens: 128, seed, temperature: 0.8 });
        tokens += r.usage.outputTokens ?? 0;
      }
    }),
  );
  const ms = performance.now() - started;
  return { calls, concurrency, outputTokens: tokens, ms: Math.round(ms), tokensPerSecond: Math.round((tokens / ms) * 1000), msPerCall: +(ms / calls).toFixed(1) };
}

await run(3, 1); // warm-up
t = performance.now();
const sequential = await run(50, 1);
const concurrent = await run(50, 2);
console.log(
  JSON.stringify(
    {
      model: path ?? 'built-in demo',
      ...info,
      firstLoadMs: Math.round(loadMs),
      sequential,
      concurrent,
      rssMiBBeforeLoad: Math.round(rssBefore / 2 ** 20),
      rssMiBAfter: Math.round(process.memoryUsage().rss / 2 ** 20),
    },
    null,
    2,
  ),
);
await model.dispose();
await rm(dir, { recursive: true, force: true });
