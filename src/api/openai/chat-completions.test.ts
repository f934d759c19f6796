// A streamed chat completion whose kept result is sent again (a replayed payment): the whole answer, tool calls
// included, comes back as the chunks OpenAI would have streamed, then the closing chunk with the receipt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareChatCompletion } from './chat-completions.ts';
import { ModelCatalog } from '../../providers/catalog.ts';
import { ProviderRegistry, type LocalEngines } from '../../providers/registry.ts';
import { embeddedModels } from '../../config/embedded-models.ts';
import type { Config } from '../../config/load.ts';
import type { EndpointContext, StreamReceipt } from '../endpoint.ts';
import type { OpenAIChatResponse } from './schemas.ts';

const context = {
  catalog: new ModelCatalog(embeddedModels()),
  providers: new ProviderRegistry({ providers: {} } as unknown as Config, {} as LocalEngines),
} as EndpointContext;
const receipt: StreamReceipt = { success: true, transaction: '0xabc', network: 'base', payer: '0x1', amount: '1234' };

test('a replayed streamed answer with a tool call: role, the call opening, its arguments, finish, receipt', () => {
  const call = prepareChatCompletion(
    { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'hi' }], stream: true, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] },
    context,
  );
  const kept: OpenAIChatResponse = {
    id: 'chatcmpl-x',
    object: 'chat.completion',
    created: 1,
    model: 'local/demo-bigram',
    choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  };
  const events = call.events!.end(kept, receipt, true).split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
  assert.deepEqual(chunks.map((chunk) => chunk.choices[0].delta), [
    { role: 'assistant', content: '' },
    { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
    {},
  ]);
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(chunks.at(-1).x402, receipt);
});
