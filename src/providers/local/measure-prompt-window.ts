// CPU per call of the embedded chat model on prompts of growing size: only the window its context holds reaches
// the model (llama-chat-convert.ts), so the cost stays flat. Run: npx node src/providers/local/measure-prompt-window.ts
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoChatModel } from './local-chat-catalog.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'prompt-window-'));
const model = createDemoChatModel({ dataDir });
const ask = (text: string) =>
  model.doGenerate({ prompt: [{ role: 'system', content: 'You are a coding agent. '.repeat(400) }, { role: 'user', content: [{ type: 'text', text }] }], maxOutputTokens: 64, seed: 1 });
await ask('warm up: the model loads once');
const words = 'the agent reads a file and answers with a tool call about payments and chains ';
for (const size of [1_000, 256_000, 1_000_000]) {
  const text = words.repeat(Math.ceil(size / words.length)).slice(0, size);
  const before = process.cpuUsage();
  const result = await ask(text);
  const used = process.cpuUsage(before);
  console.log(`${size} characters: ${((used.user + used.system) / 1000).toFixed(0)} ms of CPU, ${result.usage.inputTokens.total} prompt tokens reached the model`);
}
await model.dispose();
await rm(dataDir, { recursive: true, force: true });
