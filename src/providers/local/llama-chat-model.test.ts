import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, streamText } from 'ai';
import { LlamaChatModel, LocalModelLoadError } from './llama-chat-model.ts';
import { convertToLlamaChatHistory as toChatHistory } from './llama-chat-convert.ts';
import { createDemoChatModel, demoChatModelPath } from './local-chat-catalog.ts';
import { DEMO_CHAT_MODEL, LLAMA_CHAT_ENGINE } from '../../config/engines.ts';
import { corpusAnswers, ensureDemoChatModel } from './bigram-chat-gguf.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'llama-chat-test-'));
const model = createDemoChatModel({ dataDir });
after(async () => {
  await model.dispose();
  await rm(dataDir, { recursive: true, force: true });
});

/** words the demo model can produce: those of its training text */
const corpusWords = new Set(corpusAnswers().flat().map((u) => u.replace('\u2581', '')));

test('implements the spec version ai@7 calls natively', () => {
  assert.equal(model.specificationVersion, 'v4');
  assert.equal(model.modelId, DEMO_CHAT_MODEL.id);
});

test('generateText returns text and real token usage', async () => {
  const result = await generateText({
    model,
    system: 'You are a helpful assistant.',
    prompt: 'What is the price of a request?',
    maxOutputTokens: 60,
    seed: 7,
  });
  assert.ok(result.text.trim().length > 0, 'non-empty text');
  assert.ok((result.usage.inputTokens ?? 0) > 10, `input tokens of the rendered prompt: ${result.usage.inputTokens}`);
  assert.ok((result.usage.outputTokens ?? 0) > 0, 'output tokens');
  assert.equal(result.usage.totalTokens, result.usage.inputTokens! + result.usage.outputTokens!);
  // the text really comes from the bigram model: every word is a word of its training text
  for (const word of result.text.match(/[A-Za-z0-9']+/g) ?? []) assert.ok(corpusWords.has(word), `unknown word ${word}`);
  // the input count is the model tokenizer's count of the chat-templated prompt
  const loaded = await model.load();
  const rendered = loaded.chatWrapper
    .generateContextState({ chatHistory: toChatHistory([
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: [{ type: 'text', text: 'What is the price of a request?' }] },
    ]) })
    .contextText.tokenize(loaded.model.tokenizer);
  assert.equal(result.usage.inputTokens, rendered.length);
});

test('the same seed gives the same answer, and the prompt goes through the chat template', async () => {
  const ask = () => generateText({ model, prompt: 'Hello', maxOutputTokens: 30, seed: 42, temperature: 0.8 });
  const [a, b] = [await ask(), await ask()];
  assert.equal(a.text, b.text);
  const loaded = await model.load();
  const text = loaded.chatWrapper
    .generateContextState({ chatHistory: toChatHistory([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]) })
    .contextText.toString();
  assert.match(text, /<\|user\|>Hello.*<\|assistant\|>$/);
});

test('a seed given in the request options (providerOptions) acts as the call seed', async () => {
  const ask = (seed: number) =>
    generateText({ model, prompt: 'Hello', maxOutputTokens: 30, temperature: 1.5, providerOptions: { [LLAMA_CHAT_ENGINE.provider]: { seed } } });
  const answers = [await ask(1), await ask(1), await ask(2), await ask(3)].map((result) => result.text);
  assert.equal(answers[0], answers[1]);
  assert.equal((await generateText({ model, prompt: 'Hello', maxOutputTokens: 30, temperature: 1.5, seed: 1 })).text, answers[0]);
  assert.ok(new Set(answers).size > 1, 'other seeds, other answers');
});

test('maxOutputTokens is honoured', async () => {
  let hitLimit = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const result = await generateText({ model, prompt: 'Tell me a story', maxOutputTokens: 3, seed, temperature: 1 });
    assert.ok(result.usage.outputTokens! <= 3, `at most 3 tokens, got ${result.usage.outputTokens}`);
    if (result.finishReason === 'length') {
      hitLimit++;
      assert.equal(result.usage.outputTokens, 3);
    }
  }
  assert.ok(hitLimit > 0, 'some answers are cut at the limit');
});

test('concurrent calls share one load and all complete', async () => {
  let prepares = 0;
  const shared = new LlamaChatModel({
    modelId: 'concurrency-test',
    modelPath: demoChatModelPath(dataDir),
    parallel: 2,
    prepare: async (path) => {
      prepares++;
      return ensureDemoChatModel(path);
    },
  });
  try {
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => generateText({ model: shared, prompt: `Question ${i}`, maxOutputTokens: 40, seed: i + 1 })),
    );
    assert.equal(prepares, 1, 'loaded once');
    for (const result of results) {
      assert.ok(result.text.trim().length > 0);
      assert.ok(result.usage.outputTokens! > 0 && result.usage.outputTokens! <= 40);
    }
    assert.ok(new Set(results.map((r) => r.text)).size > 1, 'different seeds give different answers');
  } finally {
    await shared.dispose();
  }
});

test('streamText streams the answer with usage', async () => {
  const result = streamText({ model, prompt: 'Good morning', maxOutputTokens: 40, seed: 3 });
  let deltas = 0;
  for await (const delta of result.textStream) if (delta.length > 0) deltas++;
  const text = await result.text;
  const usage = await result.usage;
  assert.ok(text.trim().length > 0 && deltas > 0);
  assert.ok(usage.inputTokens! > 0 && usage.outputTokens! > 0);
});

test('a missing GGUF file gives a clear error, and a later call can retry', async () => {
  const path = join(dataDir, 'nope', 'missing.gguf');
  const missing = new LlamaChatModel({ modelId: 'missing', modelPath: path });
  await assert.rejects(
    generateText({ model: missing, prompt: 'hi', maxRetries: 0 }),
    (error: unknown) => error instanceof LocalModelLoadError && error.message.includes(path) && /not found/.test(error.message),
  );
  await assert.rejects(missing.load(), LocalModelLoadError);
});

test('a file that is not a GGUF model gives a clear error', async () => {
  const path = join(dataDir, 'garbage.gguf');
  await writeFile(path, 'this is not a model');
  const broken = new LlamaChatModel({ modelId: 'broken', modelPath: path });
  await assert.rejects(broken.load(), (error: unknown) => error instanceof LocalModelLoadError && /could not load/.test(error.message));
});

test('files and tool messages are refused: the engine is text only', () => {
  assert.throws(() =>
    toChatHistory([{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: new Uint8Array(1) } }] }] as never),
  );
  assert.deepEqual(
    toChatHistory([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
    ]),
    [{ type: 'user', text: 'a\n\nb' }, { type: 'model', response: [] }],
  );
});
