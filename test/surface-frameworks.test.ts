// Mainstream frameworks on the Responses and Messages surfaces: the AI SDK's OpenAI provider in its Responses
// mode (openai.responses(model)) and its Anthropic provider, pointed at the gateway with a paying fetch, run
// generateText with a tool (the embedded engine's call, arguments validated against the schema) and streamText.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, jsonSchema, streamText, tool, type LanguageModel } from 'ai';
import { startTestService } from './support/service.ts';
import { balanceOf, exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

const LOCAL_CHAT = 'local/demo-bigram';
const FUNDS = 10_000_000n;

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'] });
});
after(async () => {
  await service?.stop();
});

const weather = tool({
  description: 'The weather at a place',
  inputSchema: jsonSchema<{ city: string; days: number }>({
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } },
    required: ['city', 'days'],
    additionalProperties: false,
  }),
});

const surfaces: [string, (pay: typeof fetch) => LanguageModel][] = [
  ['the AI SDK’s OpenAI provider, Responses mode (/v1/responses)', (pay) => createOpenAI({ baseURL: `${service.url}/v1`, apiKey: 'unused', fetch: pay }).responses(LOCAL_CHAT)],
  ['the AI SDK’s Anthropic provider (/v1/messages)', (pay) => createAnthropic({ baseURL: `${service.url}/v1`, apiKey: 'unused', fetch: pay })(LOCAL_CHAT)],
];

for (const [name, modelOf] of surfaces) {
  test(`${name}: generateText with a forced tool call, then streamText; each paid`, async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const model = modelOf(exactPayingFetch(buyer));
    const called = await generateText({ model, prompt: 'What is the weather in Paris?', tools: { weather }, toolChoice: { type: 'tool', toolName: 'weather' }, maxOutputTokens: 128 });
    assert.equal(called.toolCalls.length, 1, JSON.stringify(called.content));
    const input = called.toolCalls[0]!.input as { city: unknown; days: unknown };
    assert.equal(called.toolCalls[0]!.toolName, 'weather');
    assert.ok(typeof input.city === 'string' && Number.isInteger(input.days));
    const afterCall = await balanceOf(service, 'base', buyer.address);
    assert.ok(afterCall < FUNDS, 'the call was paid');

    const streamed = streamText({ model, prompt: 'Tell me about the sea', maxOutputTokens: 32 });
    let pieces = 0;
    for await (const piece of streamed.textStream) if (piece) pieces++;
    assert.ok(pieces > 1, 'token by token');
    assert.ok(((await streamed.usage).outputTokens ?? 0) > 0);
    assert.ok((await balanceOf(service, 'base', buyer.address)) < afterCall, 'the stream was paid');
  });
}
