// A conversation of text turns becomes the very prompt the AI SDK's standardizePrompt and
// convertToLanguageModelPrompt make of it; any other conversation is left to them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { convertToLanguageModelPrompt, standardizePrompt } from 'ai/internal';
import { plainPrompt } from './plain-prompt.ts';

/** the SDK's prompt, as chat-completion.ts prepareCall asks for it */
const theirs = async (messages: ModelMessage[]) =>
  convertToLanguageModelPrompt({
    prompt: await standardizePrompt({ messages, allowSystemInMessages: true }),
    supportedUrls: {},
    download: async () => [],
    abortSignal: undefined,
    provider: 'up',
  });

const text = (value: string) => ({ type: 'text' as const, text: value });

const PLAIN: Record<string, ModelMessage[]> = {
  'one user turn, as the spec route sends it': [{ role: 'user', content: 'Tell me about the sea' }],
  'a conversation with system turns': [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Tell me about the sea' },
    { role: 'assistant', content: 'It is large.' },
    { role: 'system', content: 'Answer in French.' },
    { role: 'user', content: 'And deep?' },
  ],
  'turns of text parts, empty ones among them': [
    { role: 'user', content: [text('Tell me'), text(''), text(' about the sea')] },
    { role: 'assistant', content: [text(''), text('It is large.')] },
    { role: 'user', content: [] },
  ],
  'empty strings': [
    { role: 'system', content: '' },
    { role: 'user', content: '' },
    { role: 'assistant', content: '' },
  ],
};

for (const [name, messages] of Object.entries(PLAIN)) {
  test(`the same prompt as the SDK's: ${name}`, async () => {
    const ours = plainPrompt(messages);
    assert.ok(ours, 'built directly');
    assert.deepStrictEqual(ours, await theirs(messages));
  });
}

const NOT_PLAIN: Record<string, ModelMessage[]> = {
  'no turns (the SDK says why)': [],
  'an image': [{ role: 'user', content: [text('What is this?'), { type: 'image', image: new URL('https://example.com/sea.png') }] }],
  'a file': [{ role: 'user', content: [{ type: 'file', data: 'aGVsbG8=', mediaType: 'text/plain' }] }],
  'a tool call and its result': [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'depth', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'depth', output: { type: 'text', value: '11 km' } }] },
  ],
  'reasoning': [{ role: 'assistant', content: [{ type: 'reasoning', text: 'The sea is deep.' }, text('Deep.')] }],
  'provider options on a turn': [{ role: 'user', content: 'Hi', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }],
  'provider options on a part': [{ role: 'user', content: [{ ...text('Hi'), providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }] }],
};

for (const [name, messages] of Object.entries(NOT_PLAIN)) {
  test(`left to the SDK: ${name}`, () => {
    assert.equal(plainPrompt(messages), undefined);
  });
}
