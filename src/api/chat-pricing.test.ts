// What a chat prompt costs beyond its text: tool definitions, tool calls and results, response schemas and
// images count as prompt characters in the quote (docs/agent-chat.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareChat, messageInputChars, PROMPT_CHARS_PER_MESSAGE, type ChatCall } from './chat.ts';
import { ModelCatalog } from '../providers/catalog.ts';
import { ProviderRegistry, type LocalEngines } from '../providers/registry.ts';
import { embeddedModels } from '../config/embedded-models.ts';
import { quoteChat } from '../pricing/quote.ts';
import type { ChatModelConfig } from '../config/schema.ts';
import type { Config } from '../config/load.ts';
import type { EndpointContext } from './endpoint.ts';

const demo = embeddedModels().find((model) => model.capability === 'chat') as ChatModelConfig;
const model: ChatModelConfig = { ...demo, id: 'priced', maxInputChars: undefined, supports: { ...demo.supports, vision: true }, imageInputChars: 1000 };
const context = {
  catalog: new ModelCatalog([model]),
  providers: new ProviderRegistry({ providers: {} } as unknown as Config, {} as LocalEngines),
} as EndpointContext;
// room for the shortest tool call or JSON answer the embedded engine can write (it refuses a schema that cannot fit)
const MAX_TOKENS = 32;
const amount = (call: Omit<ChatCall, 'model'>) => prepareChat({ model: 'priced', maxTokens: MAX_TOKENS, ...call }, context).amount;
const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;

test('tool definitions and the response schema are priced as the characters of their JSON', () => {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  const tool = { name: 'get_weather', description: 'Weather', parameters };
  const definition = JSON.stringify({ name: tool.name, description: tool.description, parameters }).length;
  assert.equal(amount({ messages, tools: [tool] }), quoteChat(model, MAX_TOKENS, 2 + definition));
  const schema = { name: 'reply', schema: parameters };
  assert.equal(amount({ messages, responseFormat: { type: 'json_schema', ...schema } }), quoteChat(model, MAX_TOKENS, 2 + JSON.stringify(parameters).length + 'reply'.length));
});

test('an image counts as the model’s imageInputChars; tool calls and results as their text', () => {
  assert.equal(messageInputChars({ role: 'user', content: [{ type: 'text', text: 'what?' }, { type: 'image', image: new Uint8Array(4), mediaType: 'image/png' }] }, 1000), 5 + 1000);
  assert.equal(messageInputChars({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'get_weather', input: { city: 'Oslo' } }] }, 1000), 'get_weather'.length + '{"city":"Oslo"}'.length);
  assert.equal(messageInputChars({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'get_weather', output: { type: 'text', value: '4 degrees' } }] }, 1000), 9);
  const withImage = amount({ messages: [{ role: 'user', content: [{ type: 'image', image: new Uint8Array(4), mediaType: 'image/png' }] }] });
  assert.equal(withImage, quoteChat(model, MAX_TOKENS, 1000));
  assert.ok(PROMPT_CHARS_PER_MESSAGE > 0);
});
