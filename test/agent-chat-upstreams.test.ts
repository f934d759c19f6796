// Tools, tool results, images, structured output and cached-token usage pass through the gateway to an
// OpenAI-protocol and an Anthropic-protocol upstream (local servers speaking each vendor's wire format),
// plain and streamed, paid with the official `openai` SDK through @x402/fetch on the sandbox chain; under
// `upto` the charge is the reported usage priced by the table, cache reads at the model's cachedInputPercent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { ANSWER_TEXT, REPORTED, TOOL_ARGUMENTS, startAnthropicAgentUpstream, startOpenAIAgentUpstream, type AgentUpstream } from './support/agent-upstreams.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import type { RunningService } from '../src/service.ts';

const OA = 'up/openai';
const AN = 'up/anthropic';
const PLAIN = 'up/plain';
const FUNDS = 10_000_000n;
const PRICE = { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' };
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const weather = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city', 'days'],
  additionalProperties: false,
};
const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: weather, strict: true } }];

/** a conversation with everything an agent sends: an image, an earlier call and its result, a new question */
const conversation: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a weather agent.' },
  { role: 'user', content: [{ type: 'text', text: 'Where is this, and what is the weather?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_earlier', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen","days":1}' } }] },
  { role: 'tool', tool_call_id: 'call_earlier', content: '{"temperature":7}' },
  { role: 'user', content: 'And in Oslo for two days?' },
];

let openaiUp: AgentUpstream;
let anthropicUp: AgentUpstream;
let service: RunningService;

before(async () => {
  [openaiUp, anthropicUp] = await Promise.all([startOpenAIAgentUpstream(), startAnthropicAgentUpstream()]);
  const upstreamModel = (id: string, provider: string, upstream: string) => ({
    id,
    provider,
    upstreamModel: upstream,
    capability: 'chat' as const,
    maxTokens: 256,
    defaultMaxTokens: 64,
    supports: { vision: true },
    cachedInputPercent: 10,
    price: PRICE,
  });
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: {
        oa: { type: 'openai-compatible', baseURL: openaiUp.baseURL, timeoutMs: 30_000, maxRetries: 0 },
        an: { type: 'anthropic', baseURL: anthropicUp.baseURL, timeoutMs: 30_000, maxRetries: 0 },
      },
      models: [
        ...embeddedModels(),
        upstreamModel(OA, 'oa', 'gpt-test'),
        upstreamModel(AN, 'an', 'claude-sonnet-4-5'),
        // an operator's older model: text only, whole answers
        { ...upstreamModel(PLAIN, 'oa', 'plain-1'), supports: { tools: false, jsonSchema: false, vision: false, streaming: false } },
      ],
    },
  });
});
after(async () => {
  await service?.stop();
  await openaiUp?.close();
  await anthropicUp?.close();
});

function exactClient(buyer: PrivateKeyAccount): OpenAI {
  const pay = exactPayingFetch(buyer);
  return new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: pay, maxRetries: 0 });
}

const spent = async (buyer: PrivateKeyAccount) => FUNDS - (await balanceOf(service, 'base', buyer.address));

async function quote(body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  return BigInt(((await response.json()) as { accepts: Array<{ maxAmountRequired: string }> }).accepts[0]!.maxAmountRequired);
}

describe('an OpenAI-protocol upstream', () => {
  test('tools, tool_choice, parallel_tool_calls, the image and the tool history reach it; its call and cached usage come back; one charge', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: OA, messages: conversation, tools, tool_choice: { type: 'function' as const, function: { name: 'get_weather' } }, parallel_tool_calls: false };
    const price = await quote(body);
    const completion = await exactClient(buyer).chat.completions.create(body);

    const sent = openaiUp.received.at(-1)!;
    assert.equal(sent.model, 'gpt-test');
    assert.deepEqual(sent.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weather, strict: true } }]);
    assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.equal(sent.parallel_tool_calls, false);
    assert.deepEqual(sent.messages[1].content[1], { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } });
    assert.equal(sent.messages[2].tool_calls[0].id, 'call_earlier');
    assert.deepEqual(JSON.parse(sent.messages[2].tool_calls[0].function.arguments), { city: 'Bergen', days: 1 });
    assert.deepEqual(sent.messages[3], { role: 'tool', tool_call_id: 'call_earlier', content: '{"temperature":7}' });

    const [choice] = completion.choices;
    assert.equal(choice!.finish_reason, 'tool_calls');
    assert.deepEqual(choice!.message.tool_calls, [{ id: 'call_up_1', type: 'function', function: { name: 'get_weather', arguments: TOOL_ARGUMENTS } }]);
    assert.deepEqual(completion.usage, {
      prompt_tokens: REPORTED.inputTokens,
      completion_tokens: REPORTED.outputTokens,
      total_tokens: REPORTED.inputTokens + REPORTED.outputTokens,
      prompt_tokens_details: { cached_tokens: REPORTED.cachedInputTokens },
      completion_tokens_details: { reasoning_tokens: REPORTED.reasoningTokens },
    });
    assert.equal(await spent(buyer), price, 'exact: the quote, once');
  });

  test('response_format json_schema goes through as such, with its strict flag', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    await exactClient(buyer).chat.completions.create({ model: OA, messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } } });
    assert.deepEqual(openaiUp.received.at(-1)!.response_format, { type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } });
    await exactClient(buyer).chat.completions.create({ model: OA, messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } });
    assert.deepEqual(openaiUp.received.at(-1)!.response_format, { type: 'json_object' });
  });

  test('streamed: its tool-call deltas reach the client as OpenAI sends them, and the SDK assembles the call', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const chunks: any[] = [];
    const stream = exactClient(buyer).chat.completions.stream({ model: OA, messages: conversation, tools, tool_choice: 'required' });
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const completion = await stream.finalChatCompletion();
    assert.equal(openaiUp.received.at(-1)!.stream, true);
    const [call] = completion.choices[0]!.message.tool_calls!;
    const { name, arguments: args } = (call as any).function;
    assert.deepEqual({ name, args }, { name: 'get_weather', args: TOOL_ARGUMENTS });
    assert.equal(call!.id, 'call_up_1');
    const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    assert.deepEqual(deltas[0], { index: 0, id: 'call_up_1', type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.deepEqual(deltas.slice(1).map((delta: any) => delta.function.arguments), ['{"city":', '"Oslo",', '"days":2}']);
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(await spent(buyer), BigInt(chunks.at(-1).x402.amount));
  });
});

describe('an Anthropic-protocol upstream', () => {
  test('tools, tool_choice, the image and the tool history arrive in Anthropic’s shape; its tool_use comes back as a tool call', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: AN, messages: conversation, tools, tool_choice: { type: 'function' as const, function: { name: 'get_weather' } }, parallel_tool_calls: false };
    const price = await quote(body);
    const completion = await exactClient(buyer).chat.completions.create(body);

    const sent = anthropicUp.received.at(-1)!;
    assert.equal(sent.model, 'claude-sonnet-4-5');
    assert.equal(sent.tools[0].name, 'get_weather');
    assert.deepEqual(sent.tools[0].input_schema, weather);
    assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    assert.equal(JSON.stringify(sent.system).includes('You are a weather agent.'), true);
    const [question, earlierCall, earlierResult] = sent.messages;
    assert.deepEqual(question.content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
    assert.deepEqual(earlierCall.content[0], { type: 'tool_use', id: 'call_earlier', name: 'get_weather', input: { city: 'Bergen', days: 1 } });
    assert.equal(earlierResult.content[0].type, 'tool_result');
    assert.equal(earlierResult.content[0].tool_use_id, 'call_earlier');

    const [choice] = completion.choices;
    assert.equal(choice!.finish_reason, 'tool_calls');
    assert.deepEqual(choice!.message.tool_calls, [{ id: 'toolu_up_1', type: 'function', function: { name: 'get_weather', arguments: TOOL_ARGUMENTS } }]);
    assert.equal(completion.usage!.prompt_tokens, REPORTED.inputTokens, 'cache reads counted in the prompt, as OpenAI counts them');
    assert.deepEqual(completion.usage!.prompt_tokens_details, { cached_tokens: REPORTED.cachedInputTokens });
    assert.equal(await spent(buyer), price);
  });

  test('streamed: input_json_delta fragments become OpenAI tool-call deltas; a text answer streams as text', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const chunks: any[] = [];
    const stream = exactClient(buyer).chat.completions.stream({ model: AN, messages: conversation, tools, tool_choice: 'required' });
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const completion = await stream.finalChatCompletion();
    const { name, arguments: args } = (completion.choices[0]!.message.tool_calls![0] as any).function;
    assert.deepEqual({ name, args }, { name: 'get_weather', args: TOOL_ARGUMENTS });
    const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []).slice(1).map((delta: any) => delta.function.arguments);
    assert.equal(fragments.join(''), TOOL_ARGUMENTS);
    assert.ok(fragments.length > 1, 'in fragments');

    const answer = await exactClient(buyer).chat.completions.stream({ model: AN, messages: [...conversation.slice(0, 4)] }).finalChatCompletion();
    assert.equal(answer.choices[0]!.message.content, ANSWER_TEXT);
    assert.equal(answer.choices[0]!.finish_reason, 'stop');
  });
});

describe('upto charges the reported usage, cache reads at their own price', () => {
  function uptoFetch(buyer: PrivateKeyAccount): typeof fetch {
    const rpcUrl = service.sandbox!.chains.get('base')!.rpcUrl;
    const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl) }));
    return wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', new UptoEvmScheme(signer, { rpcUrl })));
  }

  for (const model of [OA, AN]) {
    test(`${model}: per request + reported output tokens + the prompt with ${REPORTED.cachedInputTokens} of ${REPORTED.inputTokens} tokens at 10%`, async () => {
      const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
      const body = { model, messages: conversation, tools, tool_choice: 'required', max_tokens: 200 };
      const ceiling = await quote(body);
      const response = await uptoFetch(buyer)(`${service.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, await response.clone().text());
      const charged = BigInt(response.headers.get('x-payment-amount')!);
      // the quote: 1000 per request + 200 max tokens at 2 each + the prompt's characters; the charge: the same
      // prompt price with its cached share at 10%, and the 20 tokens generated
      const promptPrice = ceiling - 1000n - 400n;
      const total = BigInt(REPORTED.inputTokens);
      const cached = BigInt(REPORTED.cachedInputTokens);
      const discounted = (promptPrice * (total * 100n - cached * 90n) + total * 100n - 1n) / (total * 100n);
      assert.equal(charged, 1000n + 40n + discounted);
      assert.ok(charged < ceiling);
      assert.equal(await spent(buyer), charged, 'on-chain: what the receipt says');
    });
  }
});

describe('remote images', () => {
  test('an image URL on a private address is refused by the guard before the model is called; nothing is charged', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const before = openaiUp.received.length;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: `${openaiUp.baseURL}/secret.png` } }] },
    ];
    await assert.rejects(exactClient(buyer).chat.completions.create({ model: OA, messages }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, 'messages[0].content[1]');
      assert.match(error.message, /could not be used/);
      return true;
    });
    assert.equal(openaiUp.received.length, before, 'the model was never called');
    assert.equal(await spent(buyer), 0n);
  });
});

describe('a model that lacks a feature', () => {
  test('each request using it is a 400 naming the field, before any price, free', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const openai = exactClient(buyer);
    const before = openaiUp.received.length;
    const refused = async (body: Record<string, unknown>, param: string) => {
      await assert.rejects(openai.chat.completions.create({ model: PLAIN, messages: [{ role: 'user', content: 'hi' }], ...body } as never), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.param, param);
        assert.match(error.message, new RegExp(`model ${PLAIN} does not support`));
        return true;
      });
    };
    await refused({ tools }, 'tools');
    await refused({ tool_choice: 'required', tools }, 'tools');
    await refused({ response_format: { type: 'json_object' } }, 'response_format');
    await refused({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: weather } } }, 'response_format');
    await refused({ stream: true }, 'stream');
    await refused({ messages: conversation.slice(0, 2) }, 'messages[1].content[1]');
    // what it can do still works: a plain question
    const answer = await openai.chat.completions.create({ model: PLAIN, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.choices[0]!.message.content, ANSWER_TEXT);
    assert.equal(openaiUp.received.length, before + 1, 'only the plain question reached the upstream');
    assert.equal(await spent(buyer), await quote({ model: PLAIN, messages: [{ role: 'user', content: 'hi' }] }), 'the refusals cost nothing');
  });
});
