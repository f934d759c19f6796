// Writes the built-in demo chat model (a word-bigram model as a llama GGUF, see
// src/providers/local/bigram-chat-gguf.ts) to a file and prints what it is.
// Usage: node scripts/generate-demo-chat-model.ts [out.gguf]   (default: .data/models/<name>-v<version>.gguf)
// The gateway does the same on first use, so running this is optional.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createHash } from 'node:crypto';
import { buildBigramChatGguf } from '../src/providers/local/bigram-chat-gguf.ts';
import { demoChatModelPath } from '../src/providers/local/local-chat-catalog.ts';

const out = process.argv[2] ?? demoChatModelPath('.data');
const started = performance.now();
const { bytes, stats } = buildBigramChatGguf();
await mkdir(dirname(out), { recursive: true });
await writeFile(out, bytes);
console.log(
  JSON.stringify(
    { path: out, sha256: createHash('sha256').update(bytes).digest('hex'), ...stats, buildMs: Math.round(performance.now() - started) },
    null,
    2,
  ),
);
