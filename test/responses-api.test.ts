// POST /v1/responses (OpenAI's Responses API) as its users meet it: the official `openai` SDK's
// responses.create and responses.stream(), unmodified, paying through @x402/fetch on the sandbox chain.
// Each paid call is charged once on-chain, exactly the receipt's amount; refused fields cost nothing and
// name the field.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, type ModelMessage } from 'ai';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import { postJson } from './support/service.ts';
import { startToolGateway, UP_TOOLS } from './support/tool-gateway.ts';
import { balanceOf, decodeReceipt, exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { TOOL_ARGUMENTS, TOOL_PREAMBLE, TOOL_UPSTREAM_TEXT, TOOL_UPSTREAM_USAGE, type ToolUpstream } from './support/tool-upstream.ts';
import type { RunningService } from '../src/service.ts';

const LOCAL_CHAT = 'local/demo-bigram';
const FUNDS = 10_000_000n;

let upstream: ToolUpstream;
let service: RunningService;
let gateway: Awaited<ReturnType<typeof startToolGateway>> | undefined;
before(async () => {
  gateway = await startToolGateway();
  ({ upstream, service } = gateway);
});
after(() => gateway?.stop());

function openaiClient(pay: typeof fetch): OpenAI {
  return new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: pay, maxRetries: 0 });
}

async function priceOf(body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}/v1/responses`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402, await response.clone().text());
  return BigInt(((await response.json()) as { accepts: { maxAmountRequired: string }[] }).accepts[0]!.maxAmountRequired);
}

/** the answer's `store` (the SDK's Response type leaves it out) */
const storeOf = (response: object) => (response as { store?: boolean }).store;

const spent = async (buyer: PrivateKeyAccount) => FUNDS - (await balanceOf(service, 'base', buyer.address));

describe('responses.create', () => {
  test('text: a response with one output_text message, store true, usage, charged once as the headers say', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: LOCAL_CHAT, instructions: 'Answer briefly.', input: 'Tell me about the sea', max_output_tokens: 256, store: true };
    const price = await priceOf(body);
    const { data: response, response: http } = await openaiClient(exactPayingFetch(buyer)).responses.create(body).withResponse();
    assert.equal(response.object, 'response');
    assert.match(response.id, /^resp_/);
    assert.equal(response.model, LOCAL_CHAT);
    assert.equal(storeOf(response), true, 'kept an hour, for previous_response_id');
    assert.equal(response.previous_response_id, null);
    assert.ok(['completed', 'incomplete'].includes(response.status!));
    const [message] = response.output;
    assert.equal(message!.type, 'message');
    assert.ok(response.output_text.length > 0);
    assert.ok(response.usage!.input_tokens > 0 && response.usage!.output_tokens > 0);
    assert.equal(response.usage!.total_tokens, response.usage!.input_tokens + response.usage!.output_tokens);
    const charged = BigInt(http.headers.get('x-payment-amount')!);
    assert.ok(charged > 0n && charged <= price);
    assert.equal(decodeReceipt(http.headers.get('payment-response')).success, true);
    assert.equal(await spent(buyer), charged);
  });

  test('paid through x402-fetch 1.x (X-PAYMENT) too: the same response, one charge', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(wrapFetchV1(fetch, buyer) as typeof fetch);
    const { data: response, response: http } = await client.responses.create({ model: LOCAL_CHAT, input: 'Hello', max_output_tokens: 32 }).withResponse();
    assert.equal(response.object, 'response');
    assert.equal(decodeReceipt(http.headers.get('x-payment-response')).success, true);
    assert.equal(await spent(buyer), BigInt(http.headers.get('x-payment-amount')!));
  });

  test('input items: a conversation sent whole, developer and assistant turns included', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const { data: response, response: http } = await openaiClient(exactPayingFetch(buyer)).responses.create({
      model: LOCAL_CHAT,
      input: [
        { role: 'developer', content: 'Answer briefly.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] } as never,
        { role: 'user', content: 'Tell me about the sea' },
      ],
      max_output_tokens: 32,
      // sent empty, the stored-state fields ask for nothing
      service_tier: 'auto',
      include: [],
      previous_response_id: null,
      background: false,
    }).withResponse();
    assert.ok(response.output_text.length > 0);
    assert.equal(await spent(buyer), BigInt(http.headers.get('x-payment-amount')!));
  });
});

describe('responses.stream()', () => {
  test('the Responses event sequence, numbered, text as produced, the receipt beside response.completed; one charge', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: LOCAL_CHAT, input: 'Tell me about the sea', max_output_tokens: 256 };
    const stream = openaiClient(exactPayingFetch(buyer)).responses.stream(body);
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const types = events.map((event) => event.type);
    assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    assert.ok(deltas.length > 1, 'token by token');
    const last = types.at(-1);
    assert.ok(last === 'response.completed' || last === 'response.incomplete');
    assert.deepEqual(types.slice(-4, -1), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done']);
    assert.deepEqual(
      events.map((event) => event.sequence_number),
      events.map((_, index) => index),
    );
    assert.equal(deltas.map((event) => event.delta).join(''), final.output_text);
    const receipt = events.at(-1).x402;
    assert.equal(receipt.success, true);
    assert.equal(receipt.payer.toLowerCase(), buyer.address.toLowerCase());
    assert.equal(await spent(buyer), BigInt(receipt.amount));
    assert.equal(storeOf(final), true, "OpenAI's default");
  });
});

describe('an answer cut at max_output_tokens', () => {
  test('streamed: the message item incomplete, response.incomplete last with the reason and the receipt', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    // the upstream writes one word a token and stops at max_tokens
    const stream = openaiClient(exactPayingFetch(buyer)).responses.stream({ model: UP_TOOLS, input: 'Tell me about the sea', max_output_tokens: 3 });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const last = events.at(-1);
    assert.equal(last.type, 'response.incomplete');
    assert.equal(final.status, 'incomplete');
    assert.deepEqual(final.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(final.output[0]!.type === 'message' && final.output[0]!.status, 'incomplete');
    assert.equal(final.output_text, TOOL_UPSTREAM_TEXT.split(' ').slice(0, 3).join(' ') + ' ');
    assert.equal(await spent(buyer), BigInt(last.x402.amount));
  });
});

describe('an earlier answer named by its item id (item_reference)', () => {
  test("the AI SDK's default OpenAI provider goes on past its first turn, whole and streamed: its earlier answer resolved from its id", async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const sent: unknown[] = [];
    const paying = exactPayingFetch(buyer);
    const watched: typeof fetch = async (url, init) => {
      if (init?.body) sent.push(JSON.parse(String(init.body)));
      return paying(url, init);
    };
    // the Responses API is the provider's default, `store` true: an earlier answer goes back as { type: "item_reference", id }
    const openai = createOpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: watched });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Tell me about the sea' }];
    const first = await generateText({ model: openai(LOCAL_CHAT), messages, maxOutputTokens: 24 });
    assert.ok(first.text.length > 0);
    messages.push(...first.response.messages, { role: 'user', content: 'And then?' });
    const second = await generateText({ model: openai(LOCAL_CHAT), messages, maxOutputTokens: 24 });
    assert.ok(second.text.length > 0);
    const reference = (sent.at(-1) as { input: { type?: string; id?: string }[] }).input.find((item) => item.type === 'item_reference');
    assert.match(reference?.id ?? '', /^msg_/, 'the first answer went back by reference');
    let streamed = '';
    for await (const part of streamText({ model: openai(LOCAL_CHAT), messages, maxOutputTokens: 24 }).fullStream) {
      if (part.type === 'error') throw part.error;
      if (part.type === 'text-delta') streamed += part.text;
    }
    assert.ok(streamed.length > 0);
  });

  test('an id this gateway did not give (or no longer keeps) is a 400 naming the input item, before any price', async () => {
    const response = await postJson(`${service.url}/v1/responses`, { model: LOCAL_CHAT, input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_unknown' }, { role: 'user', content: 'again' }] }, { 'X-Network': 'base' });
    assert.equal(response.status, 400);
    const { error } = (await response.json()) as { error: { param: string; message: string } };
    assert.equal(error.param, 'input[1].id');
    assert.match(error.message, /not known here .* send the item itself/);
  });
});

describe('going on with a conversation by previous_response_id', () => {
  test('each turn as the openai SDK sends it, whole and streamed: the model reads the earlier turns, each paid once at the price of the whole conversation', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const first = await client.responses.create({ model: UP_TOOLS, instructions: 'Answer briefly.', input: 'What is the weather in Paris?', max_output_tokens: 64 });
    assert.equal(first.output_text, TOOL_UPSTREAM_TEXT);

    const next = { model: UP_TOOLS, previous_response_id: first.id, input: [{ role: 'user' as const, content: 'And tomorrow?' }], max_output_tokens: 64 };
    const price = await priceOf(next);
    assert.ok(price > (await priceOf({ ...next, previous_response_id: undefined })), 'the earlier turns are priced as input');
    const paidBefore = await spent(buyer);
    const { data: second, response: http } = await client.responses.create(next).withResponse();
    assert.equal(second.previous_response_id, first.id);
    const charged = BigInt(http.headers.get('x-payment-amount')!);
    assert.ok(charged > 0n && charged <= price);
    assert.equal(await spent(buyer), paidBefore + charged);
    // what the model read: the first turn and its answer, then the new question; the instructions were not carried over
    assert.deepEqual(
      upstream.requests.at(-1)!.messages.map((message: { role: string; content: unknown }) => [message.role, JSON.stringify(message.content)]),
      [
        ['user', JSON.stringify('What is the weather in Paris?')],
        ['assistant', JSON.stringify(TOOL_UPSTREAM_TEXT)],
        ['user', JSON.stringify('And tomorrow?')],
      ],
    );

    const stream = client.responses.stream({ model: UP_TOOLS, previous_response_id: second.id, input: 'And the day after?', max_output_tokens: 64 });
    for await (const event of stream) void event;
    const third = await stream.finalResponse();
    assert.equal(third.previous_response_id, second.id);
    assert.equal(third.output_text, TOOL_UPSTREAM_TEXT);
    assert.deepEqual(
      upstream.requests.at(-1)!.messages.map((message: { role: string }) => message.role),
      ['user', 'assistant', 'user', 'assistant', 'user'],
    );
  });

  test("the tool loop as OpenAI's guide writes it: only the call's output sent, the call found in the previous response", async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const tools = [WEATHER_TOOL];
    const first = await client.responses.create({ model: UP_TOOLS, input: 'What is the weather in Paris?', tools, tool_choice: { type: 'function', name: 'get_weather' } });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    const second = await client.responses.create({
      model: UP_TOOLS,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear","celsius":21}' }],
      tools,
      tool_choice: 'none',
    });
    assert.equal(second.output_text, TOOL_UPSTREAM_TEXT);
    const history = upstream.requests.at(-1)!.messages;
    assert.deepEqual(history.map((message: { role: string }) => message.role), ['user', 'assistant', 'tool']);
    assert.equal(history[1].tool_calls[0].id, call.call_id);
    assert.deepEqual(history[2], { role: 'tool', tool_call_id: call.call_id, content: '{"sky":"clear","celsius":21}' });
  });

  test("a kept answer is its payer's: another wallet naming it, by response or by item, is refused once its payment verifies, charged nothing", async () => {
    const owner = await fundedEvmBuyer(service, ['base'], FUNDS);
    const first = await openaiClient(exactPayingFetch(owner)).responses.create({ model: LOCAL_CHAT, input: 'Hello', max_output_tokens: 16 });
    const message = first.output.find((item) => item.type === 'message')!;
    const other = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stranger = openaiClient(exactPayingFetch(other));
    const attempts = [
      { model: LOCAL_CHAT, previous_response_id: first.id, input: 'What did I say?', max_output_tokens: 16 },
      { model: LOCAL_CHAT, input: [{ type: 'item_reference' as const, id: message.id }, { role: 'user' as const, content: 'Go on' }], max_output_tokens: 16 },
    ];
    for (const body of attempts) {
      await assert.rejects(stranger.responses.create(body), (error: unknown) => {
        assert.ok(error instanceof OpenAI.PermissionDeniedError, String(error));
        assert.equal(error.code, 'payer_not_allowed');
        assert.match(error.message, /only that payer may pay for it; nothing was charged/);
        return true;
      });
    }
    assert.equal(await spent(other), 0n);
    const paid = await spent(owner);
    const again = await openaiClient(exactPayingFetch(owner)).responses.create(attempts[0]!);
    assert.equal(again.previous_response_id, first.id, 'its payer goes on');
    assert.ok((await spent(owner)) > paid);
  });

  test('an answer asked with store false is not kept: naming it is a 400 before any price, and costs nothing', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const first = await client.responses.create({ model: LOCAL_CHAT, input: 'Hello', max_output_tokens: 16, store: false });
    assert.equal(storeOf(first), false);
    const paid = await spent(buyer);
    await assert.rejects(client.responses.create({ model: LOCAL_CHAT, previous_response_id: first.id, input: 'Again', max_output_tokens: 16 }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'previous_response_id');
      assert.match(error.message, /not known here .* send the whole conversation as input items/);
      return true;
    });
    const message = first.output.find((item) => item.type === 'message')!;
    const referenced = await postJson(`${service.url}/v1/responses`, { model: LOCAL_CHAT, input: [{ type: 'item_reference', id: message.id }, { role: 'user', content: 'Again' }] }, { 'X-Network': 'base' });
    assert.equal(referenced.status, 400, 'nor are its output items');
    assert.equal(await spent(buyer), paid);
  });
});

describe('refused before any price, naming the field', () => {
  test('stored-state fields, unknown fields and what the model cannot honour cost nothing', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const cases: [Record<string, unknown>, string][] = [
      // an id this gateway did not give
      [{ previous_response_id: 'resp_123' }, 'previous_response_id'],
      [{ conversation: 'conv_123' }, 'conversation'],
      [{ background: true }, 'background'],
      [{ prompt: { id: 'pmpt_1' } }, 'prompt'],
      [{ frobnicate: 1 }, 'frobnicate'],
      [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].id'],
      // a tool result must answer a call sent before it (the gateway keeps no earlier response to find it in)
      [{ input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', call_id: 'call_9', output: 'x' }] }, 'input[1].call_id'],
      [{ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://example.com/a.png' }] }] }, 'input[0].content[0]'],
      [{ input: [{ role: 'developer', content: 'Be brief.' }] }, 'input'],
    ];
    for (const [extra, field] of cases) {
      await assert.rejects(client.responses.create({ model: LOCAL_CHAT, input: 'hi', ...extra } as never), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, `${field}: ${String(error)}`);
        assert.equal(error.param, field);
        return true;
      });
    }
    assert.equal(await spent(buyer), 0n);
  });

  test('a stream request refused is an ordinary JSON 400 in OpenAI’s shape', async () => {
    const response = await postJson(`${service.url}/v1/responses`, { model: LOCAL_CHAT, input: 'hi', stream: true, previous_response_id: 'x' });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { param: string; type: string } };
    assert.equal(body.error.param, 'previous_response_id');
    assert.equal(body.error.type, 'invalid_request_error');
  });
});


const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather at a place',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'], additionalProperties: false },
  strict: true,
};

describe('function tools and json_schema on the embedded engine (the sandbox default, offline)', () => {
  test('a forced function call (create) whose arguments validate, then the tool loop answered in text', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const { data: first, response: http } = await client.responses
      .create({ model: LOCAL_CHAT, input: 'What is the weather in Paris?', tools: [WEATHER_TOOL], tool_choice: { type: 'function', name: 'get_weather' }, max_output_tokens: 128 })
      .withResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call', JSON.stringify(first.output));
    assert.equal(call.name, 'get_weather');
    const args = JSON.parse(call.arguments);
    assert.deepEqual(Object.keys(args).sort(), ['city', 'days']);
    assert.equal(typeof args.city, 'string');
    assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7);
    const paidFirst = BigInt(http.headers.get('x-payment-amount')!);
    assert.equal(await spent(buyer), paidFirst);

    const { data: second, response: http2 } = await client.responses
      .create({
        model: LOCAL_CHAT,
        input: [
          { role: 'user', content: 'What is the weather in Paris?' },
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear","celsius":21}' },
        ],
        tools: [WEATHER_TOOL],
        tool_choice: 'none',
        max_output_tokens: 64,
      })
      .withResponse();
    assert.ok(second.output_text.length > 0);
    assert.equal(second.output.find((item) => item.type === 'function_call'), undefined);
    assert.equal(await spent(buyer), paidFirst + BigInt(http2.headers.get('x-payment-amount')!));
  });

  test('a forced function call streamed (stream()): arguments deltas that add up, arguments that validate', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = openaiClient(exactPayingFetch(buyer)).responses.stream({ model: LOCAL_CHAT, input: 'Weather in Oslo?', tools: [WEATHER_TOOL], tool_choice: 'required', max_output_tokens: 128 });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const done = events.find((event) => event.type === 'response.function_call_arguments.done');
    assert.ok(done, events.map((event) => event.type).join());
    const deltas = events.filter((event) => event.type === 'response.function_call_arguments.delta').map((event) => event.delta).join('');
    assert.equal(deltas, done.arguments);
    const call = final.output.find((item) => item.type === 'function_call');
    assert.ok(call?.type === 'function_call' && call.arguments === done.arguments);
    const args = JSON.parse(done.arguments);
    assert.ok(typeof args.city === 'string' && Number.isInteger(args.days));
    assert.equal(events.at(-1).type, 'response.completed');
    assert.equal(await spent(buyer), BigInt(events.at(-1).x402.amount));
  });

  test('text.format json_schema: output_text that validates', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const schema = { type: 'object', properties: { name: { type: 'string' }, stars: { type: 'integer', minimum: 1, maximum: 5 } }, required: ['name', 'stars'], additionalProperties: false };
    const response = await openaiClient(exactPayingFetch(buyer)).responses.create({
      model: LOCAL_CHAT,
      input: 'Rate a hotel',
      text: { format: { type: 'json_schema', name: 'rating', schema, strict: true } },
      max_output_tokens: 128,
    });
    const answer = JSON.parse(response.output_text);
    assert.deepEqual(Object.keys(answer).sort(), ['name', 'stars']);
    assert.equal(typeof answer.name, 'string');
    assert.ok(Number.isInteger(answer.stars) && answer.stars >= 1 && answer.stars <= 5);
  });
});

describe('function tools, images and cached tokens through an OpenAI-protocol upstream', () => {
  test('a forced function call (create): a function_call item, the tool and choice sent upstream, then a two-turn loop', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const { data: first, response: http } = await client.responses
      .create({ model: UP_TOOLS, input: 'What is the weather in Paris?', tools: [WEATHER_TOOL], tool_choice: { type: 'function', name: 'get_weather' } })
      .withResponse();
    assert.equal(first.status, 'completed');
    assert.deepEqual(
      first.output.map((item) => item.type),
      ['function_call'],
    );
    const call = first.output[0]!;
    assert.ok(call.type === 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, TOOL_ARGUMENTS);
    assert.equal(call.call_id, 'call_up1');
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.tools[0].function.name, 'get_weather');
    assert.deepEqual(sent.tools[0].function.parameters, WEATHER_TOOL.parameters);
    assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.equal(first.usage!.input_tokens_details.cached_tokens, TOOL_UPSTREAM_USAGE.prompt_tokens_details.cached_tokens);
    assert.equal(await spent(buyer), BigInt(http.headers.get('x-payment-amount')!));

    const { data: second, response: http2 } = await client.responses
      .create({
        model: UP_TOOLS,
        input: [
          { role: 'user', content: 'What is the weather in Paris?' },
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear","celsius":21}' },
        ],
        tools: [WEATHER_TOOL],
        tool_choice: 'none',
      })
      .withResponse();
    assert.equal(second.output_text, TOOL_UPSTREAM_TEXT);
    const history = upstream.requests.at(-1)!.messages;
    assert.equal(history[1].role, 'assistant');
    assert.equal(history[1].tool_calls[0].id, call.call_id);
    assert.deepEqual(JSON.parse(history[1].tool_calls[0].function.arguments), JSON.parse(TOOL_ARGUMENTS));
    assert.deepEqual(history[2], { role: 'tool', tool_call_id: call.call_id, content: '{"sky":"clear","celsius":21}' });
    assert.equal(await spent(buyer), BigInt(http.headers.get('x-payment-amount')!) + BigInt(http2.headers.get('x-payment-amount')!));
  });

  test('a function call streamed (stream()): the item added, arguments deltas and done, the item in response.completed', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = openaiClient(exactPayingFetch(buyer)).responses.stream({ model: UP_TOOLS, input: 'Weather in Oslo?', tools: [WEATHER_TOOL], tool_choice: 'required' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.equal(events[2].item.type, 'function_call');
    assert.equal(events[2].item.name, 'get_weather');
    assert.equal(events[3].delta + events[4].delta, TOOL_ARGUMENTS);
    assert.equal(events[5].arguments, TOOL_ARGUMENTS);
    const call = final.output[0]!;
    assert.ok(call.type === 'function_call' && call.arguments === TOOL_ARGUMENTS && call.id === events[2].item.id);
    assert.equal(await spent(buyer), BigInt(events.at(-1).x402.amount));
  });

  test('text then a function call, streamed: the message item at 0 done before the call at 1 is added, both whole in response.completed', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = openaiClient(exactPayingFetch(buyer)).responses.stream({ model: UP_TOOLS, input: 'Weather in Oslo? explain', tools: [WEATHER_TOOL], tool_choice: 'required' });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const added = events.filter((event) => event.type === 'response.output_item.added');
    assert.deepEqual(
      added.map((event) => [event.output_index, event.item.type]),
      [
        [0, 'message'],
        [1, 'function_call'],
      ],
    );
    assert.deepEqual(
      final.output.map((item) => item.type),
      ['message', 'function_call'],
    );
    assert.equal(final.output_text, TOOL_PREAMBLE);
    const call = final.output[1]!;
    assert.ok(call.type === 'function_call' && call.arguments === TOOL_ARGUMENTS);
    // as OpenAI sends them: each item done before the next is added
    const items = events.filter((event) => event.type.startsWith('response.output_item.')).map((event) => `${event.type.slice(21)}:${event.output_index}`);
    assert.deepEqual(items, ['added:0', 'done:0', 'added:1', 'done:1']);
    assert.equal(events.find((event) => event.type === 'response.output_item.done').item.content[0].text, TOOL_PREAMBLE);
    assert.equal(await spent(buyer), BigInt(events.at(-1).x402.amount));
  });

  test('an image part and text.format json_schema reach the upstream', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const schema = { type: 'object', properties: { sky: { type: 'string' } }, required: ['sky'], additionalProperties: false };
    await openaiClient(exactPayingFetch(buyer)).responses.create({
      model: UP_TOOLS,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' }] }],
      text: { format: { type: 'json_schema', name: 'sky', schema, strict: true } },
    });
    const sent = upstream.requests.at(-1)!;
    assert.deepEqual(sent.messages[0].content[1], { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } });
    assert.equal(sent.response_format.type, 'json_schema');
    assert.deepEqual(sent.response_format.json_schema.schema, schema);
  });

  test('an image part to a model without vision, and a tool choice naming no tool: 400s naming the field, nothing charged', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(exactPayingFetch(buyer));
    const image = { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'What is this?' }, { type: 'input_image' as const, image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' as const }] };
    await assert.rejects(client.responses.create({ model: LOCAL_CHAT, input: [image] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, 'input[0].content[1]');
      return true;
    });
    await assert.rejects(client.responses.create({ model: UP_TOOLS, input: 'hi', tools: [WEATHER_TOOL], tool_choice: { type: 'function', name: 'nope' } }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, 'tool_choice');
      return true;
    });
    assert.equal(await spent(buyer), 0n);
  });
});
