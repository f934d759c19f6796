import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, RetryError, generateText, type ModelMessage } from 'ai';
import { completeChat } from './chat-completion.ts';
import { createNodeHttpFetch } from '../lib/node-http-fetch.ts';
import { CHAT_PATH, CHAT_TEXT, CHAT_USAGE, startOpenAIUpstream, type OpenAIUpstream } from '../../test/support/openai-upstream.ts';

let upstream: OpenAIUpstream;
before(async () => {
  upstream = await startOpenAIUpstream();
});
beforeEach(() => upstream.reset());
after(() => upstream.close());

const messages: ModelMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Tell me about the sea' },
];
const model = () => createOpenAICompatible({ baseURL: upstream.baseURL, name: 'up', fetch: createNodeHttpFetch() }).chatModel('sea-model');
const call = { messages, maxOutputTokens: 32, temperature: 0.5, providerOptions: { up: { top_k: 3 } }, maxRetries: 2 };
// generateText refuses system turns inside messages unless told otherwise
const generateTextCall = { ...call, allowSystemInMessages: true };

test('sends the upstream the very request generateText sends, and reads the same text and usage', async () => {
  const ours = await completeChat(model(), { ...call, abortSignal: AbortSignal.timeout(5_000) });
  const theirs = await generateText({ model: model(), ...generateTextCall, abortSignal: AbortSignal.timeout(5_000) });
  const [sentByUs, sentByGenerateText] = upstream.received(CHAT_PATH);
  assert.deepEqual(sentByUs!.body, sentByGenerateText!.body);
  assert.deepEqual(sentByUs!.body, {
    model: 'sea-model',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Tell me about the sea' },
    ],
    max_tokens: 32,
    temperature: 0.5,
    top_k: 3,
  });
  assert.equal(ours.text, CHAT_TEXT);
  assert.equal(ours.text, theirs.text);
  assert.equal(ours.usage.totalTokens, CHAT_USAGE.total_tokens);
  assert.deepEqual(
    [ours.usage.inputTokens, ours.usage.outputTokens, ours.usage.totalTokens],
    [theirs.usage.inputTokens, theirs.usage.outputTokens, theirs.usage.totalTokens],
  );
});

test('a retryable failure is retried with backoff, then answers', async () => {
  upstream.fail(CHAT_PATH, { kind: 'status', status: 429, headers: { 'retry-after-ms': '10' } }, 2);
  const result = await completeChat(model(), { ...call, abortSignal: AbortSignal.timeout(5_000) });
  assert.equal(result.text, CHAT_TEXT);
  assert.equal(upstream.received(CHAT_PATH).length, 3);
});

test('past maxRetries the last upstream error comes out inside a RetryError, as generateText throws it', async () => {
  upstream.fail(CHAT_PATH, { kind: 'status', status: 500, headers: { 'retry-after-ms': '10' } }, 99);
  await assert.rejects(completeChat(model(), { ...call, maxRetries: 1, abortSignal: AbortSignal.timeout(5_000) }), (error: unknown) => {
    assert.ok(RetryError.isInstance(error));
    assert.ok(APICallError.isInstance(error.lastError));
    assert.equal(error.lastError.statusCode, 500);
    return true;
  });
  assert.equal(upstream.received(CHAT_PATH).length, 2);
});

test('a non-retryable failure is thrown at once', async () => {
  upstream.fail(CHAT_PATH, { kind: 'status', status: 400 }, 1);
  await assert.rejects(completeChat(model(), { ...call, abortSignal: AbortSignal.timeout(5_000) }), (error: unknown) => {
    assert.ok(APICallError.isInstance(error));
    assert.equal(error.statusCode, 400);
    return true;
  });
  assert.equal(upstream.received(CHAT_PATH).length, 1);
});

test('the timeout ends the call with a TimeoutError', async () => {
  upstream.fail(CHAT_PATH, { kind: 'delay', ms: 2_000 }, 1);
  await assert.rejects(completeChat(model(), { ...call, abortSignal: AbortSignal.timeout(100) }), (error: Error) => error.name === 'TimeoutError');
});
