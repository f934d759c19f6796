// POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API) as their users meet them: the
// official `@anthropic-ai/sdk`, unmodified, paying through @x402/fetch on the sandbox chain. Each paid call is
// charged once on-chain, exactly the receipt's amount; errors come in Anthropic's shape, except the 402,
// which stays the x402 one; refused fields cost nothing and name the field.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
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

/** The SDK as a developer sets it up, a key included (the gateway ignores it: payment is x402). */
function anthropicClient(pay: typeof fetch): Anthropic {
  return new Anthropic({ baseURL: service.url, apiKey: 'sk-ant-not-needed', fetch: pay, maxRetries: 0 });
}

async function priceOf(body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}/v1/messages`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402, await response.clone().text());
  return BigInt(((await response.json()) as { accepts: { maxAmountRequired: string }[] }).accepts[0]!.maxAmountRequired);
}

const spent = async (buyer: PrivateKeyAccount) => FUNDS - (await balanceOf(service, 'base', buyer.address));

describe('messages.create', () => {
  test('text: an Anthropic message, stop_reason and usage, charged once as the headers say', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = {
      model: LOCAL_CHAT,
      max_tokens: 256,
      system: [{ type: 'text' as const, text: 'Answer briefly.', cache_control: { type: 'ephemeral' as const } }],
      messages: [
        { role: 'user' as const, content: 'Hello' },
        { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Hi there' }] },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'Tell me about the sea' }] },
      ],
      temperature: 0.5,
      service_tier: 'auto' as const,
      metadata: { user_id: 'agent-7' },
      thinking: { type: 'disabled' as const },
    };
    const price = await priceOf(body);
    const { data: message, response } = await anthropicClient(exactPayingFetch(buyer)).messages.create(body).withResponse();
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.match(message.id, /^msg_/);
    assert.equal(message.model, LOCAL_CHAT);
    assert.equal(message.content[0]!.type, 'text');
    assert.ok((message.content[0] as Anthropic.TextBlock).text.length > 0);
    assert.ok(['end_turn', 'max_tokens'].includes(message.stop_reason!));
    assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
    const charged = BigInt(response.headers.get('x-payment-amount')!);
    assert.ok(charged > 0n && charged <= price);
    assert.equal(response.headers.get('x-usage-completion-tokens'), String(message.usage.output_tokens));
    assert.equal(decodeReceipt(response.headers.get('payment-response')).success, true);
    assert.equal(await spent(buyer), charged);
  });

  test('paid through x402-fetch 1.x (X-PAYMENT) too: the same message, one charge', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = anthropicClient(wrapFetchV1(fetch, buyer) as typeof fetch);
    const { data: message, response } = await client.messages.create({ model: LOCAL_CHAT, max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    assert.equal(message.type, 'message');
    assert.equal(decodeReceipt(response.headers.get('x-payment-response')).success, true);
    assert.equal(await spent(buyer), BigInt(response.headers.get('x-payment-amount')!));
  });

  test('max_tokens reached: stop_reason max_tokens, the text cut there', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    // the upstream writes one word a token and stops at max_tokens
    const message = await anthropicClient(exactPayingFetch(buyer)).messages.create({ model: UP_TOOLS, max_tokens: 3, messages: [{ role: 'user', content: 'Tell me about the sea' }] });
    assert.equal(message.stop_reason, 'max_tokens');
    assert.equal((message.content[0] as Anthropic.TextBlock).text, TOOL_UPSTREAM_TEXT.split(' ').slice(0, 3).join(' ') + ' ');
  });
});

describe('stop_sequences on the embedded engine', () => {
  test("the answer ends at the first stop sequence it reaches: stop_reason stop_sequence naming it, created and streamed", async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = anthropicClient(exactPayingFetch(buyer));
    // greedy (temperature 0): the same answer every time, so a word from inside it must stop the second one
    const ask = { model: LOCAL_CHAT, max_tokens: 40, temperature: 0, messages: [{ role: 'user' as const, content: 'Tell me about the sea' }] };
    const whole = ((await client.messages.create(ask)).content[0] as Anthropic.TextBlock).text;
    const word = whole.split(/\s+/).filter((w) => /^[a-z]{3,}$/.test(w)).find((w) => whole.indexOf(w) > 0);
    assert.ok(word, `a word inside the answer: ${JSON.stringify(whole)}`);
    const cut = whole.slice(0, whole.indexOf(word)).trimEnd();

    const stopped = await client.messages.create({ ...ask, stop_sequences: ['NEVER-IN-THE-ANSWER', word] });
    assert.equal(stopped.stop_reason, 'stop_sequence');
    assert.equal(stopped.stop_sequence, word);
    assert.equal((stopped.content[0] as Anthropic.TextBlock).text.trimEnd(), cut);

    const streamed = await client.messages.stream({ ...ask, stop_sequences: [word] }).finalMessage();
    assert.equal(streamed.stop_reason, 'stop_sequence');
    assert.equal(streamed.stop_sequence, word);
    assert.equal((streamed.content[0] as Anthropic.TextBlock).text.trimEnd(), cut);

    const unstopped = await client.messages.create({ ...ask, stop_sequences: ['NEVER-IN-THE-ANSWER'] });
    assert.notEqual(unstopped.stop_reason, 'stop_sequence');
    assert.equal(unstopped.stop_sequence, null);
  });
});

describe('messages.stream', () => {
  test("Anthropic's event sequence, text as produced, the receipt on message_stop; one charge", async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = anthropicClient(exactPayingFetch(buyer)).messages.stream({ model: LOCAL_CHAT, max_tokens: 256, messages: [{ role: 'user', content: 'Tell me about the sea' }] });
    const events: any[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const final = await stream.finalMessage();
    const types = events.map((event) => event.type);
    assert.deepEqual(types.slice(0, 2), ['message_start', 'content_block_start']);
    assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(types.slice(2, -3).every((type) => type === 'content_block_delta'));
    assert.ok(texts.length > 1, 'token by token');
    assert.equal(texts.join(''), (final.content[0] as Anthropic.TextBlock).text);
    assert.ok(final.usage.input_tokens > 0 && final.usage.output_tokens > 0, 'message_delta carries the whole usage');
    assert.ok(['end_turn', 'max_tokens'].includes(final.stop_reason!));
    const receipt = events.at(-1).x402;
    assert.equal(receipt.success, true);
    assert.equal(receipt.payer.toLowerCase(), buyer.address.toLowerCase());
    assert.equal(await spent(buyer), BigInt(receipt.amount));
  });

  test('raw: each event named by an `event:` line matching its type, a ping after message_start', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const response = await exactPayingFetch(buyer)(`${service.url}/v1/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: LOCAL_CHAT, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    const frames = (await response.text()).split('\n\n').filter(Boolean);
    const named = frames.map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length));
      assert.equal(eventLine, `event: ${data.type}`);
      return data.type as string;
    });
    assert.deepEqual(named.slice(0, 3), ['message_start', 'ping', 'content_block_start']);
    assert.equal(named.at(-1), 'message_stop');
    const stop = JSON.parse(frames.at(-1)!.split('\n')[1]!.slice(6));
    assert.equal(await spent(buyer), BigInt(stop.x402.amount));
  });
});


const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather at a place',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'] },
};

describe('tools on the embedded engine (the sandbox default, offline)', () => {
  test('a forced tool_use (create) whose input validates, charged once', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const { data: message, response } = await anthropicClient(exactPayingFetch(buyer))
      .messages.create({ model: LOCAL_CHAT, max_tokens: 128, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL], tool_choice: { type: 'tool', name: 'get_weather' } })
      .withResponse();
    assert.equal(message.stop_reason, 'tool_use');
    const use = message.content.find((block) => block.type === 'tool_use');
    assert.ok(use?.type === 'tool_use', JSON.stringify(message.content));
    assert.equal(use.name, 'get_weather');
    const input = use.input as { city: unknown; days: unknown };
    assert.deepEqual(Object.keys(input).sort(), ['city', 'days']);
    assert.ok(typeof input.city === 'string' && Number.isInteger(input.days) && (input.days as number) >= 1 && (input.days as number) <= 7);
    assert.equal(await spent(buyer), BigInt(response.headers.get('x-payment-amount')!));
  });

  test('a forced tool_use streamed (stream, tool_choice any): input_json_delta pieces assembled into a valid input', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = anthropicClient(exactPayingFetch(buyer)).messages.stream({ model: LOCAL_CHAT, max_tokens: 128, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL], tool_choice: { type: 'any' } });
    const events: any[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const use = final.content.find((block) => block.type === 'tool_use') as Anthropic.ToolUseBlock;
    const pieces = events.filter((event) => event.type === 'content_block_delta' && event.delta.type === 'input_json_delta').map((event) => event.delta.partial_json).join('');
    assert.deepEqual(JSON.parse(pieces), use.input);
    assert.equal(typeof (use.input as { city: unknown }).city, 'string');
    assert.equal(await spent(buyer), BigInt(events.at(-1).x402.amount));
  });
});

describe('tools, images and cached tokens through an OpenAI-protocol upstream', () => {
  test('a forced tool_use (create), then a tool_result turn: the history as sent upstream, one charge each', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = anthropicClient(exactPayingFetch(buyer));
    const ask = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const { data: first, response: http } = await client.messages
      .create({ model: UP_TOOLS, max_tokens: 64, messages: [ask], tools: [WEATHER_TOOL], tool_choice: { type: 'tool', name: 'get_weather' } })
      .withResponse();
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((block) => block.type === 'tool_use');
    assert.ok(use && use.type === 'tool_use', JSON.stringify(first.content));
    assert.equal(use.name, 'get_weather');
    assert.match(use.id, /^toolu_/);
    assert.deepEqual(use.input, JSON.parse(TOOL_ARGUMENTS));
    const sent = upstream.requests.at(-1)!;
    assert.deepEqual(sent.tools[0].function.parameters, WEATHER_TOOL.input_schema);
    assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    // Anthropic counts cache reads apart from input_tokens
    const cached = TOOL_UPSTREAM_USAGE.prompt_tokens_details.cached_tokens;
    assert.equal(first.usage.cache_read_input_tokens, cached);
    assert.equal(first.usage.input_tokens, TOOL_UPSTREAM_USAGE.prompt_tokens - cached);

    const { data: second, response: http2 } = await client.messages
      .create({
        model: UP_TOOLS,
        max_tokens: 64,
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'none' },
        messages: [
          ask,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: '{"sky":"clear"}' }] }, { type: 'text', text: 'And so?' }] },
        ],
      })
      .withResponse();
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content, [{ type: 'text', text: TOOL_UPSTREAM_TEXT }]);
    const history = upstream.requests.at(-1)!.messages;
    assert.equal(history[1].tool_calls[0].id, use.id);
    assert.deepEqual(history[2], { role: 'tool', tool_call_id: use.id, content: '{"sky":"clear"}' });
    assert.deepEqual(history[3], { role: 'user', content: 'And so?' });
    assert.equal(await spent(buyer), BigInt(http.headers.get('x-payment-amount')!) + BigInt(http2.headers.get('x-payment-amount')!));
  });

  test('a tool_use streamed (stream): content_block_start tool_use, input_json_delta pieces, the input assembled', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = anthropicClient(exactPayingFetch(buyer)).messages.stream({ model: UP_TOOLS, max_tokens: 64, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL], tool_choice: { type: 'any' } });
    const events: any[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const final = await stream.finalMessage();
    assert.deepEqual(
      events.map((event) => event.type),
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    );
    assert.equal(events[1].content_block.type, 'tool_use');
    assert.equal(events[2].delta.type, 'input_json_delta');
    assert.equal(events[2].delta.partial_json + events[3].delta.partial_json, TOOL_ARGUMENTS);
    assert.equal(final.stop_reason, 'tool_use');
    assert.deepEqual((final.content[0] as Anthropic.ToolUseBlock).input, JSON.parse(TOOL_ARGUMENTS));
    assert.equal(await spent(buyer), BigInt(events.at(-1).x402.amount));
  });

  test('text then a tool_use, streamed: block 0 text stopped before block 1 tool_use starts, both in the final message', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const stream = anthropicClient(exactPayingFetch(buyer)).messages.stream({ model: UP_TOOLS, max_tokens: 64, messages: [{ role: 'user', content: 'Weather? explain' }], tools: [WEATHER_TOOL], tool_choice: { type: 'any' } });
    const events: any[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const final = await stream.finalMessage();
    const blocks = events.filter((event) => event.type.startsWith('content_block_') && event.type !== 'content_block_delta').map((event) => `${event.type}:${event.index}`);
    assert.deepEqual(blocks, ['content_block_start:0', 'content_block_stop:0', 'content_block_start:1', 'content_block_stop:1']);
    assert.deepEqual(
      final.content.map((block) => block.type),
      ['text', 'tool_use'],
    );
    assert.equal((final.content[0] as Anthropic.TextBlock).text, TOOL_PREAMBLE);
    assert.deepEqual((final.content[1] as Anthropic.ToolUseBlock).input, JSON.parse(TOOL_ARGUMENTS));
    assert.equal(final.stop_reason, 'tool_use');
    assert.equal(await spent(buyer), BigInt(events.at(-1).x402.amount));
  });

  test('a base64 image block reaches the upstream as an image part; stop_sequences, temperature and top_p go along', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    await anthropicClient(exactPayingFetch(buyer)).messages.create({
      model: UP_TOOLS,
      max_tokens: 64,
      stop_sequences: ['\n\nHuman:'],
      // sampling settings are not in this SDK version's types, and still sent as given
      ...({ temperature: 0.25, top_p: 0.5 } as object),
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'text', text: 'What is this?' }] }],
    });
    const sent = upstream.requests.at(-1)!;
    assert.deepEqual(sent.messages[0].content[0], { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } });
    assert.deepEqual([sent.stop, sent.temperature, sent.top_p, sent.max_tokens], [['\n\nHuman:'], 0.25, 0.5, 64]);
  });

  test('an image to a model without vision: a 400 naming the block, nothing charged', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo=' } };
    await assert.rejects(anthropicClient(exactPayingFetch(buyer)).messages.create({ model: LOCAL_CHAT, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, image] }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError, String(error));
      assert.match((error.error as any).error.message, /^messages\.0\.content\.1/);
      return true;
    });
    assert.equal(await spent(buyer), 0n);
  });
});

describe('errors in Anthropic’s shape, refused before any price', () => {
  test('refused fields cost nothing and name the field', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = anthropicClient(exactPayingFetch(buyer));
    const base = { model: LOCAL_CHAT, max_tokens: 16, messages: [{ role: 'user' as const, content: 'hi' }] };
    const cases: [Record<string, unknown>, string][] = [
      [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] }, 'mcp_servers'],
      [{ frobnicate: true }, 'frobnicate'],
      [{ max_tokens: undefined }, 'max_tokens'],
      [{ messages: [{ role: 'user', content: [{ type: 'video', source: { type: 'text', data: 'x' } }] }] }, 'messages.0.content.0.type: unknown type "video"'],
      [{ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }] }] }, 'messages.0.content.0'],
      [{ messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] }] }, 'messages.0.content.0'],
      [{ tool_choice: { type: 'any' } }, 'tool_choice'],
      [{ messages: [{ role: 'user', content: [] }] }, 'messages'],
    ];
    for (const [extra, field] of cases) {
      await assert.rejects(client.messages.create({ ...base, ...extra } as never), (error: unknown) => {
        assert.ok(error instanceof Anthropic.BadRequestError, `${field}: ${String(error)}`);
        assert.equal((error.error as any).type, 'error');
        assert.equal((error.error as any).error.type, 'invalid_request_error');
        assert.match((error.error as any).error.message, new RegExp(`^${field}`));
        return true;
      });
    }
    await assert.rejects(client.messages.create({ ...base, model: 'no/such-model' }), (error: unknown) => {
      // an unknown model is a 400 on every route of the gateway, naming the models there are
      assert.ok(error instanceof Anthropic.BadRequestError, String(error));
      assert.match((error.error as any).error.message, /local\/demo-bigram/);
      return true;
    });
    assert.equal(await spent(buyer), 0n);
  });

  test('the 402 stays the x402 one: PAYMENT-REQUIRED and the x402 body, not an Anthropic error', async () => {
    const response = await postJson(`${service.url}/v1/messages`, { model: LOCAL_CHAT, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { 'x-api-key': 'sk-ant-ignored', 'anthropic-version': '2023-06-01' });
    assert.equal(response.status, 402);
    assert.ok(response.headers.get('payment-required'));
    const body = (await response.json()) as { x402Version: number; accepts: unknown[] };
    assert.ok(body.x402Version >= 1 && body.accepts.length > 0);
  });

  test('an unserved method under /v1/messages answers in Anthropic’s shape', async () => {
    const response = await fetch(`${service.url}/v1/messages`);
    assert.ok(response.status === 404 || response.status === 405);
    const body = (await response.json()) as { type: string; error: { type: string } };
    assert.equal(body.type, 'error');
  });
});

describe('count_tokens', () => {
  test('free: input_tokens for the prompt, more with tools; an unknown field is a 400', async () => {
    const client = anthropicClient(fetch);
    const plain = await client.messages.countTokens({ model: LOCAL_CHAT, system: 'Be brief.', messages: [{ role: 'user', content: 'Tell me about the sea' }] });
    assert.ok(plain.input_tokens > 0);
    const withTools = await client.messages.countTokens({
      model: LOCAL_CHAT,
      messages: [{ role: 'user', content: 'Tell me about the sea' }],
      tools: [{ name: 'get_weather', description: 'Weather at a place', input_schema: { type: 'object', properties: { place: { type: 'string' } } } }],
    });
    assert.ok(withTools.input_tokens > plain.input_tokens - 3);
    // an image counts as the model's imageInputChars (3,000 characters, 750 tokens at 4 a token), as the quote counts it
    const text = { type: 'text' as const, text: 'Tell me about the sea' };
    const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo='.repeat(100) } };
    const without = await client.messages.countTokens({ model: LOCAL_CHAT, messages: [{ role: 'user', content: [text] }] });
    const withImage = await client.messages.countTokens({ model: LOCAL_CHAT, messages: [{ role: 'user', content: [text, image] }] });
    assert.equal(withImage.input_tokens - without.input_tokens, 750);
    // the body the client will send to /v1/messages: what only shapes the answer is taken, and counts nothing
    const asSent = await client.messages.countTokens({ model: LOCAL_CHAT, messages: [{ role: 'user', content: 'Tell me about the sea' }], system: 'Be brief.', max_tokens: 5, stream: true, temperature: 0.2 } as never);
    assert.equal(asSent.input_tokens, plain.input_tokens);
    await assert.rejects(client.messages.countTokens({ model: LOCAL_CHAT, messages: [{ role: 'user', content: 'hi' }], frobnicate: 5 } as never), Anthropic.BadRequestError);
  });
});

describe('one price table for every chat surface', () => {
  test('the same conversation is quoted the same on /v1/messages, /v1/responses, /v1/chat/completions and /api/v1/ai/chat', async () => {
    const requirementOf = async (path: string, body: unknown) => {
      const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
      assert.equal(response.status, 402, path);
      const { accepts } = (await response.json()) as { accepts: { maxAmountRequired: string; resource: string }[] };
      assert.equal(accepts[0]!.resource, `${service.url}${path}`);
      return accepts[0]!.maxAmountRequired;
    };
    const quotes = [
      await requirementOf('/v1/messages', { model: LOCAL_CHAT, max_tokens: 16, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi there' }] }),
      await requirementOf('/v1/responses', { model: LOCAL_CHAT, max_output_tokens: 16, instructions: 'Be brief.', input: 'Hi there' }),
      await requirementOf('/v1/chat/completions', { model: LOCAL_CHAT, max_tokens: 16, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }] }),
      await requirementOf('/api/v1/ai/chat', { model: LOCAL_CHAT, max_tokens: 16, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }] }),
    ];
    assert.equal(new Set(quotes).size, 1, quotes.join(' '));
  });
});

describe('models.list and models.retrieve', () => {
  test("the chat models in Anthropic's shape, paged as the SDK pages them; without anthropic-version the list is OpenAI's", async () => {
    const client = anthropicClient(fetch);
    const chatModels = service.config.models.filter((model) => model.capability === 'chat').map((model) => model.id);
    assert.ok(chatModels.length > 1);
    const listed: string[] = [];
    for await (const model of client.models.list({ limit: 1 })) {
      assert.equal(model.type, 'model');
      assert.equal(model.lifecycle, 'active');
      assert.ok(!Number.isNaN(Date.parse(model.created_at)));
      listed.push(model.id);
    }
    assert.deepEqual(listed, chatModels, 'every chat model, one page at a time');
    const page = await client.models.list({ limit: 1 });
    assert.equal(page.has_more, true);
    assert.equal(page.last_id, chatModels[0]);

    const model = await client.models.retrieve(UP_TOOLS);
    assert.equal(model.id, UP_TOOLS);
    assert.ok(model.max_tokens! > 0);
    await assert.rejects(client.models.retrieve('no-such-model'), Anthropic.NotFoundError);
    await assert.rejects(client.models.list({ limit: 0 }), Anthropic.BadRequestError);

    const openaiList = (await (await fetch(`${service.url}/v1/models`)).json()) as { object: string };
    assert.equal(openaiList.object, 'list');
  });
});

describe('discovery', () => {
  test('/v1/responses, /v1/messages and /v1/messages/count_tokens are in the OpenAPI document behind /docs', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, any>; tags: { name: string }[] };
    assert.ok(document.tags.some((tag) => tag.name === 'Anthropic-compatible'));
    assert.deepEqual(document.paths['/v1/messages'].post.tags, ['Anthropic-compatible']);
    for (const path of ['/v1/responses', '/v1/messages']) {
      const ok = document.paths[path].post.responses['200'].content;
      assert.ok(ok['application/json'] && ok['text/event-stream'], path);
      assert.ok(document.paths[path].post.responses['402'], path);
    }
    assert.ok(document.paths['/v1/messages/count_tokens'].post.responses['200']);
    assert.deepEqual(document.paths['/v1/messages'].post.requestBody.content['application/json'].schema.required.sort(), ['max_tokens', 'messages', 'model']);
    assert.equal((await fetch(`${service.url}/docs`)).status, 200);
  });
});
