// A tool-using agent built on the official `openai` SDK, paying through @x402/fetch on the sandbox chain,
// against the offline demo model (no key, no network): forced tool calls and json_schema answers that
// validate against their schemas (checked with Ajv), the SDK's stream helper assembling streamed tool-call
// deltas, and runTools completing a tool round trip. Each paid call is charged once, read on-chain; every
// refused field costs nothing and is named.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { Ajv } from 'ajv';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService } from './support/service.ts';
import { balanceOf, chargedPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

const MODEL = 'local/demo-bigram';
const FUNDS = 10_000_000n;
const ajv = new Ajv({ strict: false });

const weather = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 5 },
  },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
};
const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: weather, strict: true } };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'] });
});
after(() => service?.stop());

function client(pay: typeof fetch): OpenAI {
  return new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: pay, maxRetries: 0 });
}

const spent = async (buyer: PrivateKeyAccount) => FUNDS - (await balanceOf(service, 'base', buyer.address));

describe('the openai SDK, paying, against the offline demo model', () => {
  test('a forced tool call: finish_reason tool_calls, arguments that validate, one charge', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const paying = chargedPayingFetch(buyer);
    const completion = await client(paying.fetch).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 64,
    });
    const [choice] = completion.choices;
    assert.equal(choice!.finish_reason, 'tool_calls');
    assert.equal(choice!.message.content, null);
    const [call] = choice!.message.tool_calls!;
    assert.equal(call!.type, 'function');
    assert.match(call!.id, /^call_/);
    const fn = (call as { function: { name: string; arguments: string } }).function;
    assert.equal(fn.name, 'get_weather');
    const validate = ajv.compile(weather);
    assert.ok(validate(JSON.parse(fn.arguments)), `${fn.arguments}: ${ajv.errorsText(validate.errors)}`);
    assert.equal(paying.charged.length, 1);
    assert.equal(await spent(buyer), paying.charged[0]);
  });

  test('response_format json_schema (strict): the content validates, one charge', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const paying = chargedPayingFetch(buyer);
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, score: { type: 'number', minimum: 0, maximum: 10 }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['title', 'score', 'tags'],
      additionalProperties: false,
    };
    const completion = await client(paying.fetch).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Review the sea' }],
      response_format: { type: 'json_schema', json_schema: { name: 'review', schema, strict: true } },
      max_tokens: 64,
    });
    const content = completion.choices[0]!.message.content!;
    const validate = ajv.compile(schema);
    assert.ok(validate(JSON.parse(content)), `${content}: ${ajv.errorsText(validate.errors)}`);
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.equal(await spent(buyer), paying.charged[0]);
  });

  test('chat.completions.stream with tools: the SDK assembles the streamed call from its deltas', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const paying = chargedPayingFetch(buyer);
    const raw: unknown[] = [];
    const stream = client(paying.fetch).chat.completions.stream({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Bergen?' }],
      tools: [weatherTool],
      tool_choice: 'required',
      max_tokens: 64,
      stream_options: { include_usage: true },
    });
    stream.on('chunk', (chunk) => raw.push(chunk));
    let doneArguments: string | undefined;
    stream.on('tool_calls.function.arguments.done', (event) => {
      doneArguments = event.arguments;
    });
    const completion = await stream.finalChatCompletion();
    const [call] = completion.choices[0]!.message.tool_calls!;
    const fn = (call as { function: { name: string; arguments: string } }).function;
    assert.equal(fn.name, 'get_weather');
    assert.equal(doneArguments, fn.arguments);
    assert.ok(ajv.validate(weather, JSON.parse(fn.arguments)), fn.arguments);
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');

    // on the wire, as OpenAI sends a call: the first delta carries index, id, type and name; then fragments
    const deltas = raw.flatMap((chunk: any) => chunk.choices[0]?.delta?.tool_calls ?? []);
    assert.deepEqual(Object.keys(deltas[0]).sort(), ['function', 'id', 'index', 'type']);
    assert.deepEqual(deltas[0].function, { name: 'get_weather', arguments: '' });
    assert.ok(deltas.length > 2, 'the arguments came in fragments');
    assert.ok(deltas.slice(1).every((delta: any) => delta.id === undefined && delta.index === 0));
    assert.equal(deltas.map((delta: any) => delta.function.arguments).join(''), fn.arguments);
    const last = raw.at(-1) as any;
    assert.equal(last.x402.success, true);
    assert.equal(await spent(buyer), BigInt(last.x402.amount));
  });

  test('runTools: call, tool result, final answer; each round trip paid once', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const paying = chargedPayingFetch(buyer);
    const calls: unknown[] = [];
    const runner = client(paying.fetch).chat.completions.runTools({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
      // the SDK's runner refuses a final answer cut at max_tokens: the demo model's answers end well within 128
      max_tokens: 128,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: weather,
            parse: JSON.parse,
            function: (args: unknown) => {
              calls.push(args);
              return { temperature: 4, sky: 'grey' };
            },
          },
        },
      ],
    });
    const answer = await runner.finalContent();
    assert.equal(calls.length, 1, 'the tool ran once');
    assert.ok(ajv.validate(weather, calls[0]), JSON.stringify(calls[0]));
    assert.ok(answer && answer.trim().length > 0, 'a final answer in words');
    const messages = runner.messages;
    assert.deepEqual(messages.map((message) => message.role), ['user', 'assistant', 'tool', 'assistant']);
    assert.equal(paying.charged.length, 2, 'two paid calls');
    assert.equal(await spent(buyer), paying.charged[0]! + paying.charged[1]!);
  });
});

describe('a framework: the AI SDK’s generateText with tools, through a paying fetch', () => {
  test('the model calls the tool, the SDK runs it, the model answers; two paid calls', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const paying = chargedPayingFetch(buyer);
    const gateway = createOpenAICompatible({ name: 'gateway', baseURL: `${service.url}/v1`, fetch: paying.fetch });
    const ran: unknown[] = [];
    const result = await generateText({
      model: gateway.chatModel(MODEL),
      prompt: 'What is the weather in Oslo?',
      maxOutputTokens: 128,
      tools: {
        get_weather: tool({
          description: 'Weather for a city',
          inputSchema: jsonSchema<{ city: string; unit: string; days: number }>(weather),
          execute: async (input) => {
            ran.push(input);
            return { temperature: 4 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    assert.equal(ran.length, 1);
    assert.ok(ajv.validate(weather, ran[0]), JSON.stringify(ran[0]));
    assert.equal(result.steps.length, 2);
    assert.equal(result.steps[0]!.finishReason, 'tool-calls');
    assert.ok(result.text.trim().length > 0);
    assert.equal(paying.charged.length, 2);
    assert.equal(await spent(buyer), paying.charged[0]! + paying.charged[1]!);
  });
});

describe('refusals cost nothing and name the field', () => {
  test('what the model cannot honour is a 400 before any price', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const openai = client(chargedPayingFetch(buyer).fetch);
    const refused = async (body: Record<string, unknown>, param: string, message: RegExp) => {
      await assert.rejects(openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...body } as never), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.param, param);
        assert.match(error.message, message);
        return true;
      });
    };
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from('not really a png').toString('base64')}` } };
    await refused({ messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }] }, 'messages[0].content[1]', /does not support image input/);
    // arguments that can never fit max_tokens: refused before the price, as the work could only fail
    const essays = { type: 'object', properties: { parts: { type: 'array', minItems: 20, items: { type: 'string', minLength: 40 } } }, required: ['parts'] };
    await refused(
      { tools: [{ type: 'function', function: { name: 'write', parameters: essays } }], tool_choice: 'required', max_tokens: 256 },
      'tools[0].function.parameters',
      /shortest tool call is 871 bytes of JSON, more than max_tokens 256/,
    );
    await refused(
      { tools: [{ type: 'function', function: { name: 'deep', parameters: { $ref: 'https://example.com/schema.json' } } }] },
      'tools[0].function.parameters',
      /\$ref https:\/\/example.com\/schema.json is not within the schema/,
    );
    await refused({ tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice', /nope/);
    await refused({ tool_choice: 'required' }, 'tool_choice', /no tools/);
    await refused({ functions: [{ name: 'f', parameters: {} }] }, 'functions', /use tools/);
    await refused(
      { messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_unknown', content: '4' }] },
      'messages[1].tool_call_id',
      /not the id of an earlier assistant tool call/,
    );
    assert.equal(await spent(buyer), 0n);
  });

  test('/v1/models and /api/v1/ai/models say what each chat model supports', async () => {
    const list = (await (await fetch(`${service.url}/v1/models`)).json()) as { data: Array<{ id: string; supports?: unknown }> };
    assert.deepEqual(list.data.find((model) => model.id === MODEL)!.supports, { tools: true, json_schema: true, vision: false, streaming: true, reasoning: false });
    assert.equal(list.data.find((model) => model.id === 'preview-image')!.supports, undefined);
    const catalog = (await (await fetch(`${service.url}/api/v1/ai/models`)).json()) as { models: Array<Record<string, unknown>> };
    const demo = catalog.models.find((model) => model.id === MODEL)!;
    assert.deepEqual(demo.supports, { tools: true, jsonSchema: true, vision: false, streaming: true, reasoning: false });
    assert.equal(demo.imageInputChars, 3000);
  });
});
