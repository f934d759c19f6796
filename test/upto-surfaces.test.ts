// /v1/responses and /v1/messages streamed under x402 `upto`, paid by the unmodified official clients (the
// openai SDK's responses.stream(), @anthropic-ai/sdk's messages.stream, through @x402/fetch with @x402/evm's
// UptoEvmScheme) on the sandbox base chain: charged the price table's cost of the tokens the upstream reports,
// below the ceiling of the 402, the receipt in the last event, balances read on-chain moving by exactly that;
// the same proof again replays the kept answer as the whole event sequence and moves nothing. A model that
// fails mid-stream ends the stream with the surface's error event, and nothing is charged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { startToolUpstream, TOOL_UPSTREAM_TEXT, TOOL_UPSTREAM_USAGE, type ToolUpstream } from './support/tool-upstream.ts';
import { CHAT_TEXT, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

const BASE = NETWORKS.base as EvmNetwork;
const UP = 'up/tools';
const PROMPT = 'Tell me about the sea';
/** 1000 per request + 12 completion tokens at 2 per token + 21 characters at 0.1 per character, rounded up */
const METERED = 1000n + 24n + 3n;

const FAILING = 'up/failing';

let upstream: ToolUpstream;
let failing: OpenAIUpstream;
let service: RunningService;
before(async () => {
  upstream = await startToolUpstream();
  failing = await startOpenAIUpstream();
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: {
        tools: { type: 'openai-compatible', baseURL: upstream.baseURL, timeoutMs: 30_000, maxRetries: 0 },
        failing: { type: 'openai-compatible', baseURL: failing.baseURL, timeoutMs: 30_000, maxRetries: 0 },
      },
      models: [
        ...embeddedModels(),
        {
          id: UP,
          provider: 'tools',
          upstreamModel: 'tool-model-1',
          capability: 'chat',
          maxTokens: 256,
          defaultMaxTokens: 64,
          price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
        },
        {
          id: FAILING,
          provider: 'failing',
          upstreamModel: 'mock-chat-1',
          capability: 'chat',
          maxTokens: 256,
          defaultMaxTokens: 64,
          price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
        },
      ],
    },
  });
});
after(async () => {
  await service?.stop();
  await upstream?.close();
  await failing?.close();
});

/** @x402/fetch paying under upto, keeping each PAYMENT-SIGNATURE it sent (to replay it). */
function payingUpto(buyer: PrivateKeyAccount): { pay: typeof fetch; proofs: string[] } {
  const rpcUrl = service.sandbox!.chains.get('base')!.rpcUrl;
  const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl) }));
  const client = new x402Client().register(BASE.caip2 as `${string}:${string}`, new UptoEvmScheme(signer, { rpcUrl }));
  const proofs: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const headers = init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined);
    const proof = new Headers(headers).get('PAYMENT-SIGNATURE');
    if (proof) proofs.push(proof);
    return fetch(input, init);
  };
  return { pay: wrapFetchWithPayment(recording, client), proofs };
}

async function ceilingOf(path: string, body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  const required = JSON.parse(Buffer.from(response.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8'));
  const upto = required.accepts.find((a: { scheme: string }) => a.scheme === 'upto');
  assert.ok(upto, 'upto is offered for chat');
  return BigInt(upto.amount);
}

/** The data of each event of a replayed stream, with its `event:` name. */
async function replay(path: string, body: unknown, proof: string): Promise<{ name: string; data: any }[]> {
  const response = await postJson(`${service.url}${path}`, body, { 'PAYMENT-SIGNATURE': proof });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.text())
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [name, data] = frame.split('\n');
      return { name: name!.slice('event: '.length), data: JSON.parse(data!.slice('data: '.length)) };
    });
}

const balance = (buyer: PrivateKeyAccount) => balanceOf(service, 'base', buyer.address);

test('responses.stream() under upto: charged the tokens the upstream reports, once; a replay is the whole sequence and free', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const body = { model: UP, input: PROMPT, max_output_tokens: 200, stream: true };
  const ceiling = await ceilingOf('/v1/responses', body);
  const before = await balance(buyer);
  const { pay, proofs } = payingUpto(buyer);
  const stream = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: pay, maxRetries: 0 }).responses.stream({
    model: UP,
    input: PROMPT,
    max_output_tokens: 200,
  });
  const events: any[] = [];
  for await (const event of stream) events.push(event);
  assert.equal((await stream.finalResponse()).output_text, TOOL_UPSTREAM_TEXT);
  const completed = events.at(-1);
  assert.equal(completed.type, 'response.completed');
  assert.equal(completed.response.usage.output_tokens, TOOL_UPSTREAM_USAGE.completion_tokens);
  assert.equal(BigInt(completed.x402.amount), METERED);
  assert.ok(METERED < ceiling);
  assert.equal(await balance(buyer), before - METERED);

  const again = await replay('/v1/responses', body, proofs[0]!);
  assert.deepEqual(
    again.map((event) => event.data.sequence_number),
    again.map((_, index) => index),
  );
  assert.ok(again.every((event) => event.name === event.data.type));
  assert.deepEqual(
    again.map((event) => event.data.type),
    events.map((event) => event.type).filter((type, index, all) => type !== 'response.output_text.delta' || all[index - 1] !== type),
    'the same sequence, the text in one delta',
  );
  assert.equal(again.at(-1)!.data.x402.amount, METERED.toString());
  assert.equal(await balance(buyer), before - METERED, 'a replay moves nothing');
});

test('messages.stream under upto: charged the tokens the upstream reports, once; a replay is the whole sequence and free', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const body = { model: UP, max_tokens: 200, messages: [{ role: 'user' as const, content: PROMPT }], stream: true };
  const ceiling = await ceilingOf('/v1/messages', body);
  const before = await balance(buyer);
  const { pay, proofs } = payingUpto(buyer);
  const stream = new Anthropic({ baseURL: service.url, apiKey: 'not-needed', fetch: pay, maxRetries: 0 }).messages.stream({
    model: UP,
    max_tokens: 200,
    messages: [{ role: 'user', content: PROMPT }],
  });
  const events: any[] = [];
  stream.on('streamEvent', (event) => events.push(event));
  const final = await stream.finalMessage();
  assert.equal((final.content[0] as Anthropic.TextBlock).text, TOOL_UPSTREAM_TEXT);
  assert.equal(final.usage.output_tokens, TOOL_UPSTREAM_USAGE.completion_tokens);
  assert.equal(BigInt(events.at(-1).x402.amount), METERED);
  assert.ok(METERED < ceiling);
  assert.equal(await balance(buyer), before - METERED);

  const again = await replay('/v1/messages', body, proofs[0]!);
  assert.ok(again.every((event) => event.name === event.data.type));
  assert.deepEqual(
    again.map((event) => event.data.type),
    ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
  );
  assert.equal(again[3]!.data.delta.text, TOOL_UPSTREAM_TEXT);
  assert.equal(again.at(-1)!.data.x402.amount, METERED.toString());
  assert.equal(await balance(buyer), before - METERED, 'a replay moves nothing');
});

test('a model failing mid-stream: each surface ends with its error event, the SDK raises it, nothing is charged', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const before = await balance(buyer);
  const { pay } = payingUpto(buyer);

  failing.fail('/v1/chat/completions', { kind: 'stream-cut', afterChunks: 4 });
  const responses = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: pay, maxRetries: 0 }).responses.stream({ model: FAILING, input: PROMPT });
  let text = '';
  await assert.rejects(
    (async () => {
      for await (const event of responses) if (event.type === 'response.output_text.delta') text += event.delta;
    })(),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.match(error.message, /nothing was charged/);
      return true;
    },
  );
  assert.ok(text.length > 0 && text.length < CHAT_TEXT.length, 'part of the answer arrived before the failure');

  failing.fail('/v1/chat/completions', { kind: 'stream-cut', afterChunks: 4 });
  const messages = new Anthropic({ baseURL: service.url, apiKey: 'not-needed', fetch: pay, maxRetries: 0 }).messages.stream({
    model: FAILING,
    max_tokens: 64,
    messages: [{ role: 'user', content: PROMPT }],
  });
  await assert.rejects(messages.finalMessage(), (error: unknown) => {
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.match(error.message, /nothing was charged/);
    assert.equal((error.error as any).error.type, 'api_error');
    return true;
  });
  assert.equal(await balance(buyer), before);
});
