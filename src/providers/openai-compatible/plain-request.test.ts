// A plain call's body, built directly, is byte for byte what @ai-sdk/openai-compatible's prepareRequest builds; any
// call that is not plain is left to prepareRequest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAICompatible, type OpenAICompatibleChatLanguageModel } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { plainRequestBody } from './plain-request.ts';

// as the registry creates it
const sdk = createOpenAICompatible({ baseURL: 'http://127.0.0.1:1/v1', name: 'up', includeUsage: true, supportsStructuredOutputs: true }).chatModel('sea-model') as OpenAICompatibleChatLanguageModel;
const theirs = async (options: LanguageModelV4CallOptions) => JSON.stringify((await sdk.prepareRequest(options)).body);
const ours = (options: LanguageModelV4CallOptions) => JSON.stringify(plainRequestBody('sea-model', 'up', options));

const text = (value: string) => ({ type: 'text' as const, text: value });
const conversation: LanguageModelV4Prompt = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: [text('Tell me about the sea')] },
  { role: 'assistant', content: [text('It is '), text('large.')] },
  { role: 'user', content: [text('And'), text(' deep?')] },
];

const PLAIN: Record<string, LanguageModelV4CallOptions> = {
  'one user turn, as the gateway sends it': { prompt: [{ role: 'user', content: [text('Hello')] }], maxOutputTokens: 32, providerOptions: { up: {} } },
  'a conversation with every setting': {
    prompt: conversation,
    maxOutputTokens: 64,
    temperature: 0.5,
    topP: 0.9,
    frequencyPenalty: 0.1,
    presencePenalty: -0.2,
    stopSequences: ['\n\n', 'END'],
    seed: 7,
    providerOptions: { up: {} },
    responseFormat: { type: 'text' },
    reasoning: 'provider-default',
    tools: [],
  },
  'no provider options at all': { prompt: [{ role: 'user', content: [] }] },
  'text that needs escaping': { prompt: [{ role: 'user', content: [text('"quotes", \\ and \u2028 and emoji 🌊')] }], maxOutputTokens: 1 },
};

for (const [name, options] of Object.entries(PLAIN)) {
  test(`plain, the SDK's bytes: ${name}`, async () => {
    assert.equal(ours(options), await theirs(options));
  });
}

const user = [{ role: 'user' as const, content: [text('Hi')] }];
const NOT_PLAIN: Record<string, LanguageModelV4CallOptions> = {
  'a tool': { prompt: user, tools: [{ type: 'function', name: 'read', inputSchema: { type: 'object' } }] },
  'a JSON response format': { prompt: user, responseFormat: { type: 'json' } },
  'a reasoning effort': { prompt: user, reasoning: 'high' },
  'a provider option (passed through as a body key)': { prompt: user, providerOptions: { up: { prompt_cache_key: 'k' } } },
  'another provider namespace': { prompt: user, providerOptions: { openaiCompatible: {} } },
  'topK (the SDK warns)': { prompt: user, topK: 3 },
  'an image': { prompt: [{ role: 'user', content: [text('what is this?'), { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } }] }] },
  'a tool result turn': { prompt: [...user, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: 'x' } }] }] },
  'a turn with provider options': { prompt: [{ role: 'user', content: [text('Hi')], providerOptions: { openaiCompatible: { name: 'ann' } } }] },
  'a reasoning part': { prompt: [...user, { role: 'assistant', content: [{ type: 'reasoning', text: 'hm' }, text('Hello')] }] },
};

for (const [name, options] of Object.entries(NOT_PLAIN)) {
  test(`not plain, left to the SDK: ${name}`, () => {
    assert.equal(plainRequestBody('sea-model', 'up', options), undefined);
  });
}

test('a provider named with a dash or an underscore is left to the SDK (it looks the camelCased name up too)', () => {
  assert.equal(plainRequestBody('m', 'my-up', { prompt: user, providerOptions: { 'my-up': {} } }), undefined);
});
