// The chat model that reads answers itself, against @ai-sdk/openai-compatible's own on the same answers: for each
// answer a server may give (text, reasoning, refusals, tool calls whole or in fragments, errors in a stream, a
// stream cut before its finish), both read the same content, parts, finish reason and usage, and both send the
// same request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModelV4, type LanguageModelV4CallOptions, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createNodeHttpClient } from '../../lib/node-http-fetch.ts';
import { openAICompatibleChat } from './chat-model.ts';
import { partReaderOf } from '../part-reader.ts';

/** what the server answers next: a status and a JSON body, or the text of an event stream */
let next: { status: number; json?: unknown; events?: string } = { status: 200 };
const received: unknown[] = [];
let server: Server;
let baseURL: string;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString()));
      if (next.events !== undefined) {
        res.writeHead(next.status, { 'content-type': 'text/event-stream' });
        res.end(next.events);
      } else {
        res.writeHead(next.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(next.json));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => server.close());

const http = createNodeHttpClient();
const sdk = () => createOpenAICompatible({ baseURL, name: 'up', fetch: http.fetch, includeUsage: true, supportsStructuredOutputs: true }).chatModel('m');
const ours = () => openAICompatibleChat(sdk(), { baseURL, send: http.send, maxResponseBytes: 1 << 20 });
const models: Array<[string, () => LanguageModelV4]> = [
  ['sdk', sdk],
  ['ours', ours],
];

const options: LanguageModelV4CallOptions = {
  prompt: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
  ],
  maxOutputTokens: 64,
  tools: [{ type: 'function', name: 'get_weather', description: 'Weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
  toolChoice: { type: 'auto' },
  providerOptions: { up: { top_k: 3, reasoningEffort: 'low' } },
};

/** ids the SDK makes up where the server gave none differ per call: compared by shape, not value */
const withoutMadeUpIds = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'toolCallId' || key === 'id') && typeof v === 'string' && !v.startsWith('call_') && !['txt-0', 'reasoning-0'].includes(v) ? '<generated>' : v));

const completion = (message: Record<string, unknown>, finish: string, usage?: Record<string, unknown>) => ({
  id: 'chatcmpl-1',
  created: 1_700_000_000,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  ...(usage ? { usage } : {}),
});

const whole: Array<[string, unknown]> = [
  ['text and usage with cached and reasoning tokens', completion({ content: 'Sunny.' }, 'stop', { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2, accepted_prediction_tokens: 1 } })],
  ['reasoning then text', completion({ reasoning_content: 'Check the sky.', content: 'Sunny.' }, 'stop')],
  ['a refusal', completion({ content: null, refusal: 'I cannot.' }, 'stop')],
  ['tool calls, one without an id', completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }, { type: 'function', function: { name: 'get_weather', arguments: '{}' } }] }, 'tool_calls')],
  ['content as parts, with thinking', completion({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hm.' }] }, { type: 'text', text: 'Rain.' }] }, 'length')],
];

for (const [name, body] of whole) {
  test(`a whole answer: ${name}`, async () => {
    next = { status: 200, json: body };
    const results = [];
    for (const [, model] of models) {
      const { content, finishReason, usage, providerMetadata } = await model().doGenerate(options);
      results.push(withoutMadeUpIds({ content, finishReason, usage, providerMetadata }));
    }
    assert.deepEqual(results[1], results[0]);
    assert.deepEqual(received.at(-1), received.at(-2), 'the same request');
  });
}

const sse = (...events: unknown[]) => events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join('');
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({ id: 'chatcmpl-1', created: 1_700_000_000, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra });

const streams: Array<[string, string]> = [
  ['text in pieces, usage last', sse(chunk({ role: 'assistant', content: '' }), chunk({ content: 'Sun' }), chunk({ content: 'ny.' }), chunk({}, 'stop'), { id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } }, '[DONE]')],
  ['reasoning, then text', sse(chunk({ reasoning_content: 'Look ' }), chunk({ reasoning: 'up.' }), chunk({ content: 'Rain.' }), chunk({}, 'stop'))],
  [
    'two tool calls in fragments, arguments before a name',
    sse(
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"ci' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] }),
      chunk({}, 'tool_calls'),
    ),
  ],
  ['a refusal', sse(chunk({ refusal: 'No.' }), chunk({}, 'stop'))],
  ['an error event', sse(chunk({ content: 'A' }), { error: { message: 'overloaded', type: 'server_error' } })],
  ['an event that is not JSON', sse(chunk({ content: 'A' }), '{not json', chunk({}, 'stop'))],
  ['cut before its finish', sse(chunk({ content: 'A' }))],
];

/** The parts of a stream, read from its ReadableStream or, as streamChat reads it, from its part reader. */
async function parts(model: LanguageModelV4, via: 'stream' | 'reader' = 'stream'): Promise<unknown[]> {
  const result = await model.doStream(options);
  const seen: LanguageModelV4StreamPart[] = [];
  if (via === 'stream') for await (const part of result.stream as unknown as AsyncIterable<LanguageModelV4StreamPart>) seen.push(part);
  else {
    const reader = partReaderOf(result);
    for (let next = await reader.read(); !next.done; next = await reader.read()) seen.push(next.value);
  }
  // errors are compared by what they say
  return seen.map((part) => (part.type === 'error' ? { type: 'error', error: part.error instanceof Error ? 'an Error' : part.error } : part));
}

for (const [name, events] of streams) {
  test(`a stream: ${name}`, async () => {
    next = { status: 200, events };
    const [theirs, mine] = [withoutMadeUpIds(await parts(sdk())), withoutMadeUpIds(await parts(ours()))];
    assert.deepEqual(mine, theirs);
    assert.deepEqual(withoutMadeUpIds(await parts(ours(), 'reader')), theirs, 'read as streamChat reads it');
    const [sentBySdk, sentByUs] = received.slice(-2) as Array<Record<string, unknown>>;
    assert.deepEqual(sentByUs, sentBySdk, 'the same request');
    assert.equal(sentByUs!.stream, true);
  });
}

test('an error status is the SDK error: status, the upstream message, retryable or not', async () => {
  for (const [status, retryable] of [
    [429, true],
    [500, true],
    [400, false],
  ] as const) {
    next = { status, json: { error: { message: `no (${status})`, type: 'x' } } };
    for (const [name, model] of models) {
      await assert.rejects(async () => model().doGenerate(options), (error: unknown) => {
        assert.ok(APICallError.isInstance(error), name);
        assert.equal(error.statusCode, status);
        assert.equal(error.message, `no (${status})`);
        assert.equal(error.isRetryable, retryable);
        return true;
      });
    }
  }
});

test('an answer that is not a chat completion is refused, not retried', async () => {
  next = { status: 200, json: { choices: [] } };
  for (const [name, model] of models) {
    // the SDK throws its InvalidResponseDataError, ours an APICallError with the 200: neither is retried
    await assert.rejects(async () => model().doGenerate(options), (error: unknown) => !(APICallError.isInstance(error) && error.isRetryable), name);
  }
});

test('an answer past the byte cap is refused', async () => {
  next = { status: 200, json: completion({ content: 'x'.repeat(2_000) }, 'stop') };
  const capped = openAICompatibleChat(sdk(), { baseURL, send: http.send, maxResponseBytes: 1_000 });
  await assert.rejects(async () => capped.doGenerate(options), (error: unknown) => APICallError.isInstance(error) && /limit/.test(String((error.cause as Error).message)));
  next = { status: 200, events: sse(...Array.from({ length: 40 }, () => chunk({ content: 'xxxxxxxxxxxxxxxxxxxx' })), chunk({}, 'stop')) };
  const { stream } = await capped.doStream(options);
  await assert.rejects(async () => {
    for await (const part of stream as unknown as AsyncIterable<LanguageModelV4StreamPart>) void part;
  }, /limit/);
  const reader = partReaderOf(await capped.doStream(options));
  await assert.rejects(async () => {
    while (!(await reader.read()).done);
  }, /limit/);
});
