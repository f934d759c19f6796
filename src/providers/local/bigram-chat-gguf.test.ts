import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBigramChatGguf, corpusAnswers, ensureDemoChatModel } from './bigram-chat-gguf.ts';

test('the demo model is built deterministically', () => {
  const a = buildBigramChatGguf();
  const b = buildBigramChatGguf();
  const hash = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
  assert.equal(hash(a.bytes), hash(b.bytes));
  assert.equal(new TextDecoder().decode(a.bytes.subarray(0, 4)), 'GGUF');
  assert.ok(a.stats.bytes < 8 * 1024 * 1024, `small: ${a.stats.bytes} bytes`);
  assert.equal(a.stats.embeddingLength % 32, 0);
});

test('the corpus splits into answers of words and punctuation', () => {
  const answers = corpusAnswers('Hello there, friend.\n\nYes!');
  assert.deepEqual(answers, [['\u2581Hello', '\u2581there', ',', '\u2581friend', '.'], ['\u2581Yes', '!']]);
});

test('ensureDemoChatModel writes the file once', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bigram-gguf-'));
  try {
    const path = join(dir, 'models', 'demo.gguf');
    assert.deepEqual(await ensureDemoChatModel(path), { created: true });
    assert.deepEqual(await ensureDemoChatModel(path), { created: false });
    assert.equal((await stat(path)).size, buildBigramChatGguf().stats.bytes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
