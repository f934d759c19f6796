// The OpenAI-compatible surface (/v1) as its users meet it: the official `openai` SDK, its fetch wrapped by
// the official x402 clients (@x402/fetch 2.x, x402-fetch 1.x), paying on the sandbox chain; the AI SDK's
// openai-compatible provider pointed at the gateway. Every paid call is charged exactly once, read
// on-chain; a 400 costs nothing; a stream cut by the client or by the model is charged as the rules say.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { PrivateKeyAccount } from 'viem/accounts';
import { capturedLogger, startTestService, postJson } from './support/service.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_TEXT, CHAT_USAGE, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { decodeHeader } from '../src/x402/encoding.ts';
import { evmPaymentKey } from '../src/x402/payment-key.ts';
import { NETWORKS, type EvmNetwork, type NetworkName } from '../src/x402/networks.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import type { RunningService } from '../src/service.ts';

const LOCAL_CHAT = 'local/demo-bigram';
const UP_CHAT = 'up/chat';
const FUNDS = 10_000_000n;

let upstream: OpenAIUpstream;
let service: RunningService;
const logged = capturedLogger('debug');

before(async () => {
  upstream = await startOpenAIUpstream();
  service = await startTestService({
    networks: ['base', 'polygon'],
    config: {
      providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL, timeoutMs: 30_000, maxRetries: 0 } },
      models: [
        ...embeddedModels(),
        {
          id: UP_CHAT,
          provider: 'mock',
          upstreamModel: 'mock-chat-1',
          capability: 'chat',
          maxTokens: 256,
          defaultMaxTokens: 64,
          price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
        },
      ],
      // polygon chat settles before the work runs (as Solana work would): the other order of the money rules
      settleFirst: ['polygon:chat'],
    },
    log: logged.log,
  });
});
after(async () => {
  await service?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

/** The openai SDK pointed at the gateway, paying through `pay`. */
function openaiClient(pay: typeof fetch): OpenAI {
  return new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'not-needed', fetch: pay, maxRetries: 0 });
}

function payingV1(buyer: PrivateKeyAccount): typeof fetch {
  return wrapFetchV1(fetch, buyer) as typeof fetch;
}

function payingV2(buyer: PrivateKeyAccount): typeof fetch {
  return wrapFetchV2(fetch, registerExactEvmScheme(new x402Client(), { signer: buyer }));
}

async function quote(path: string, body: unknown, network: NetworkName = 'base'): Promise<PaymentRequirements> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': network });
  assert.equal(response.status, 402, await response.clone().text());
  return ((await response.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
}

/** What the buyer spent on `network`, read on-chain. */
async function spent(buyer: PrivateKeyAccount, network: NetworkName = 'base'): Promise<bigint> {
  return FUNDS - (await balanceOf(service, network, buyer.address));
}

async function signedProof(buyer: PrivateKeyAccount, path: string, body: unknown, network: NetworkName) {
  const requirement = await quote(path, body, network);
  const chainId = (NETWORKS[network] as EvmNetwork).chainId;
  const proof = await signEvmProof(buyer, requirement, chainId);
  const payload = (decodeHeader(proof) as { payload: Parameters<typeof evmPaymentKey>[2] }).payload;
  return { proof, price: BigInt(requirement.maxAmountRequired), key: evmPaymentKey(chainId, service.rails.get(network)!.asset, payload) };
}

describe('GET /v1/models', () => {
  test('lists the catalog in OpenAI’s shape, free', async () => {
    const models = await openaiClient(fetch).models.list();
    const ids = models.data.map((model) => model.id);
    assert.ok(ids.includes(LOCAL_CHAT) && ids.includes('preview-image') && ids.includes('espeak-ng') && ids.includes(UP_CHAT));
    assert.deepEqual(Object.keys(models.data.find((model) => model.id === 'preview-image')!).sort(), ['created', 'id', 'object', 'owned_by']);
    assert.deepEqual(Object.keys(models.data.find((model) => model.id === LOCAL_CHAT)!).sort(), ['created', 'id', 'object', 'owned_by', 'supports']);
    const one = await openaiClient(fetch).models.retrieve(LOCAL_CHAT);
    assert.equal(one.id, LOCAL_CHAT);
  });

  test('the /v1 routes and the chat event streams are in the OpenAPI document', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, any> };
    for (const path of ['/v1/chat/completions', '/v1/images/generations', '/v1/audio/speech', '/v1/models']) assert.ok(document.paths[path], path);
    assert.ok(document.paths['/v1/chat/completions'].post.responses['200'].content['text/event-stream']);
    assert.ok(document.paths['/api/v1/ai/chat'].post.responses['200'].content['text/event-stream']);
  });
});

describe('the 402 is the x402 one', () => {
  test('/v1/chat/completions quotes exactly what /api/v1/ai/chat quotes for the same call', async () => {
    const v1 = await postJson(`${service.url}/v1/chat/completions`, { model: LOCAL_CHAT, messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 16 }, { 'X-Network': 'base' });
    const spec = await postJson(`${service.url}/api/v1/ai/chat`, { model: LOCAL_CHAT, messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 16 }, { 'X-Network': 'base' });
    assert.equal(v1.status, 402);
    const [a, b] = [(await v1.json()) as any, (await spec.json()) as any];
    assert.equal(a.accepts[0].resource, `${service.url}/v1/chat/completions`);
    const comparable = (body: any) => ({ ...body, accepts: body.accepts.map((r: any) => ({ ...r, resource: '', outputSchema: { input: { ...r.outputSchema.input, bodyFields: {} } } })) });
    assert.deepEqual(comparable(a), comparable(b));
  });
});

describe('the openai SDK pays through the official x402 clients, one charge per call', () => {
  test('chat, x402-fetch 1.x: an OpenAI chat.completion, usage and cost in headers and body', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: LOCAL_CHAT, messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Tell me about the sea' }] }], max_tokens: 16, seed: 7 };
    const price = BigInt((await quote('/v1/chat/completions', body)).maxAmountRequired);
    const { data: completion, response } = await openaiClient(payingV1(buyer)).chat.completions.create(body).withResponse();
    assert.equal(completion.object, 'chat.completion');
    assert.match(completion.id, /^chatcmpl-/);
    assert.equal(completion.model, LOCAL_CHAT);
    assert.equal(completion.choices[0]!.message.role, 'assistant');
    assert.ok(completion.choices[0]!.message.content!.length > 0);
    assert.ok(['stop', 'length'].includes(completion.choices[0]!.finish_reason));
    const usage = completion.usage!;
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    assert.equal(response.headers.get('x-payment-amount'), price.toString());
    assert.equal(response.headers.get('x-payment-amount-usdc'), (Number(price) / 1e6).toString());
    assert.equal(response.headers.get('x-usage-total-tokens'), String(usage.total_tokens));
    assert.equal(response.headers.get('x-usage-prompt-tokens'), String(usage.prompt_tokens));
    assert.equal(decodeReceipt(response.headers.get('x-payment-response')).success, true);
    assert.equal(await spent(buyer), price);
  });

  test('streamed chat, @x402/fetch 2.x: chunks as produced, the receipt on the last chunk, usage when asked', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: LOCAL_CHAT, messages: [{ role: 'user' as const, content: 'Tell me about the sea' }], max_tokens: 24, stream: true as const, stream_options: { include_usage: true } };
    const price = BigInt((await quote('/v1/chat/completions', body)).maxAmountRequired);
    const stream = await openaiClient(payingV2(buyer)).chat.completions.create(body);
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const texts = chunks.flatMap((chunk) => (chunk.choices[0]?.delta?.content ? [chunk.choices[0].delta.content] : []));
    assert.ok(texts.length > 1, `the answer came in ${texts.length} piece(s), not token by token`);
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.ok(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0].id));
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.ok(last.usage.completion_tokens > 0);
    assert.equal(last.x402.success, true);
    assert.equal(last.x402.amount, price.toString());
    assert.equal(last.x402.payer.toLowerCase(), buyer.address.toLowerCase());
    assert.equal(await spent(buyer), price);

    // the receipt is also where every payment's is, and the payment's result is the whole completion
    const payment = (await (await fetch(`${service.url}/api/v1/payments/${last.x402.transaction}`)).json()) as Record<string, unknown>;
    assert.equal(payment.state, 'settled');
    assert.equal(payment.amount, price.toString());
    assert.equal(payment.resultAvailable, true);
  });

  test('images as url and as b64_json, x402-fetch 1.x', async () => {
    for (const format of ['url', 'b64_json'] as const) {
      const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
      const body = { model: 'preview-image', prompt: 'a lighthouse', n: 2, size: '256x256', response_format: format };
      const price = BigInt((await quote('/v1/images/generations', body)).maxAmountRequired);
      const result = await openaiClient(payingV1(buyer)).images.generate(body);
      assert.equal(result.data!.length, 2);
      for (const image of result.data!) {
        const bytes = format === 'url' ? Buffer.from(await (await fetch(image.url!)).arrayBuffer()) : Buffer.from(image.b64_json!, 'base64');
        assert.deepEqual([...bytes.subarray(1, 4)], [...Buffer.from('PNG')], `${format}: a PNG`);
      }
      assert.equal(await spent(buyer), price, `${format}: charged once`);
    }
  });

  test('speech: the audio bytes with their Content-Type, the file kept with the payment', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: 'espeak-ng', input: 'Hello from the gateway', voice: 'en-us', response_format: 'mp3' as const };
    const price = BigInt((await quote('/v1/audio/speech', body)).maxAmountRequired);
    const response = await openaiClient(payingV2(buyer)).audio.speech.create(body);
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    const audio = Buffer.from(await response.arrayBuffer());
    assert.ok(audio.length > 1000 && audio[0] === 0xff, 'MPEG frames');
    const again = await fetch(response.headers.get('content-location')!);
    assert.deepEqual(Buffer.from(await again.arrayBuffer()), audio);
    assert.equal(await spent(buyer), price);
  });

  test("what OpenAI's clients send by default is taken: image hints and size auto, OpenAI's voices, instructions; each named", async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(payingV1(buyer));
    const image = { model: 'preview-image', prompt: 'a lighthouse', size: 'auto', quality: 'auto', style: 'vivid', moderation: 'auto', output_format: 'png', background: 'auto' } as const;
    const { data, response } = await client.images.generate(image as never).withResponse();
    assert.equal(data.data!.length, 1);
    assert.deepEqual(response.headers.get('x-ignored-fields')!.split(', ').sort(), ['moderation', 'quality', 'style']);
    const speech = await client.audio.speech.create({ model: 'espeak-ng', input: 'Hello', voice: 'alloy', instructions: 'cheerful', stream_format: 'audio' } as never);
    assert.equal(speech.status, 200);
    assert.deepEqual(speech.headers.get('x-ignored-fields')!.split(', ').sort(), ['instructions', 'voice']);
    const sse = await postJson(`${service.url}/v1/audio/speech`, { model: 'espeak-ng', input: 'Hello', voice: 'en-us', stream_format: 'sse' }, { 'X-Network': 'base' });
    assert.equal(sse.status, 400);
  });

  test('a 400 costs nothing and names the field, in OpenAI’s error shape', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const client = openaiClient(payingV1(buyer));
    // a tool schema the demo model cannot follow (its shortest arguments are longer than max_tokens allows)
    const essays = { type: 'object', properties: { a: { type: 'array', minItems: 50, items: { type: 'string', minLength: 40 } } }, required: ['a'] };
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: essays } }];
    await assert.rejects(client.chat.completions.create({ model: LOCAL_CHAT, messages: [{ role: 'user', content: 'hi' }], tools }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'tools[0].function.parameters');
      assert.equal(error.type, 'invalid_request_error');
      return true;
    });
    await assert.rejects(client.audio.speech.create({ model: 'espeak-ng', input: 'hi', voice: 'robot' as never }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'voice');
      return true;
    });
    await assert.rejects(client.chat.completions.create({ model: LOCAL_CHAT, messages: [{ role: 'user', content: 'hi' }], n: 2 }), /n: only one/);
    assert.equal(await spent(buyer), 0n);
  });
});

describe('streamed chat from an OpenAI-compatible upstream: the money rules', () => {
  const body = { model: UP_CHAT, messages: [{ role: 'user' as const, content: 'Tell me about the sea' }], stream: true };

  test('tokens reach the client while the model is still producing them', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    upstream.fail('/v1/chat/completions', { kind: 'stream-hold', afterChunks: 3 });
    const stream = await openaiClient(payingV1(buyer)).chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let last: any;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      // the upstream holds after its third event: what arrived so far was sent before the model finished
      if (text.length > 0 && upstream.streamsHolding === 1) upstream.release();
      last = chunk;
    }
    assert.equal(text, CHAT_TEXT);
    assert.deepEqual(last.usage, CHAT_USAGE);
    assert.equal(last.x402.success, true);
    assert.equal(await spent(buyer), BigInt(last.x402.amount));
  });

  /**
   * Opens a paid stream with `proof`, reads until the first piece of text, then leaves: quietly, as a client that
   * left (logged at debug), not as a failed generation (a warning).
   */
  async function leaveAfterFirstText(proof: string): Promise<void> {
    const linesBefore = logged.lines.length;
    const leaving = new AbortController();
    const response = await fetch(`${service.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-PAYMENT': proof },
      body: JSON.stringify(body),
      signal: leaving.signal,
    });
    assert.equal(response.status, 200);
    for await (const data of sseData(response)) if (JSON.parse(data).choices[0]?.delta?.content) break;
    leaving.abort();
    await until('the gateway to stop reading the model', () => upstream.streamsClosedEarly === 1);
    const since = () => logged.lines.slice(linesBefore);
    await until('the stream\'s end to be logged', () => since().some((line) => line.msg === 'client closed the request'));
    assert.deepEqual(since().filter((line) => (line.level as number) >= 40), [], 'nothing logged as a failure');
  }

  /** The whole stream paid by `proof`: its text and its last chunk. */
  async function readWhole(proof: string): Promise<{ text: string; last: any }> {
    const response = await until('the payment to be free to use', async () => {
      const attempt = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-PAYMENT': proof });
      if (attempt.status === 409) return void (await attempt.body?.cancel());
      return attempt;
    });
    if (response.status !== 200) assert.fail(`${response.status}: ${await response.text()}`);
    let text = '';
    const chunks: any[] = [];
    for await (const data of sseData(response)) {
      if (data === '[DONE]') break;
      const chunk = JSON.parse(data);
      chunks.push(chunk);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    return { text, last: chunks.at(-1) };
  }

  test('settled after the stream (EVM exact): a client that leaves mid-stream is charged nothing; its proof stays usable', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const { proof, price, key } = await signedProof(buyer, '/v1/chat/completions', body, 'base');
    upstream.fail('/v1/chat/completions', { kind: 'stream-hold', afterChunks: 3 });
    await leaveAfterFirstText(proof);
    await until('the reservation to be released', async () => (await service.ledger.get(key))?.state === 'released');
    assert.equal(await spent(buyer), 0n);

    const { text, last } = await readWhole(proof);
    assert.equal(text, CHAT_TEXT);
    assert.equal(last.x402.success, true);
    assert.equal(await spent(buyer), price, 'charged once, for the stream delivered whole');
  });

  test('settled after the stream: a model failing mid-stream is charged nothing, and the client is told', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    upstream.fail('/v1/chat/completions', { kind: 'stream-cut', afterChunks: 4 });
    const stream = await openaiClient(payingV1(buyer)).chat.completions.create({ ...body, stream: true });
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      })(),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError, String(error));
        assert.match(error.message, /nothing was charged/);
        return true;
      },
    );
    assert.ok(text.length > 0 && text.length < CHAT_TEXT.length, 'part of the answer arrived before the failure');
    assert.equal(await spent(buyer), 0n);
  });

  test('settled before the stream (settleFirst): a client that leaves is charged once, and the same proof fetches the whole answer', async () => {
    const buyer = await fundedEvmBuyer(service, ['polygon'], FUNDS);
    const { proof, price, key } = await signedProof(buyer, '/v1/chat/completions', body, 'polygon');
    upstream.fail('/v1/chat/completions', { kind: 'stream-hold', afterChunks: 3 });
    await leaveAfterFirstText(proof);
    assert.equal((await service.ledger.get(key))?.state, 'settled');
    assert.equal(await spent(buyer, 'polygon'), price);

    const { text, last } = await readWhole(proof);
    assert.equal(text, CHAT_TEXT);
    assert.equal(last.x402.success, true);
    assert.equal(await spent(buyer, 'polygon'), price, 'no second charge');
    const { text: replayed } = await readWhole(proof);
    assert.equal(replayed, CHAT_TEXT, 'the kept answer, again, at no charge');
    assert.equal(await spent(buyer, 'polygon'), price);
  });
});

describe('the spec route streams too', () => {
  test('/api/v1/ai/chat with stream: true: text events as produced, then the 200 body with its receipt; a replay is free', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const body = { model: LOCAL_CHAT, prompt: 'Tell me about the sea', max_tokens: 24, stream: true, stream_options: { include_usage: true } };
    const { proof, price } = await signedProof(buyer, '/api/v1/ai/chat', body, 'base');
    const read = async () => {
      const response = await postJson(`${service.url}/api/v1/ai/chat`, body, { 'X-PAYMENT': proof });
      if (response.status !== 200) assert.fail(`${response.status}: ${await response.text()}`);
      assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
      assert.equal(response.headers.get('x-payment-amount'), price.toString());
      const events: string[] = [];
      for await (const data of sseData(response)) events.push(data);
      return events;
    };
    const events = await read();
    assert.equal(events.at(-1), '[DONE]');
    const final = JSON.parse(events.at(-2)!);
    const deltas = events.slice(0, -2).map((data) => JSON.parse(data).delta as string);
    assert.ok(deltas.length > 1, 'token by token');
    assert.equal(deltas.join(''), final.response);
    assert.ok(final.usage.tokens > 0);
    assert.equal(final.x402.success, true);
    assert.equal(await spent(buyer), price);

    const replay = await read();
    assert.equal(JSON.parse(replay.at(-2)!).response, final.response);
    assert.equal(await spent(buyer), price, 'a replay is not charged');
  });
});

describe('a mainstream framework: the AI SDK’s openai-compatible provider', () => {
  test('generateText and streamText through a paying fetch', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const gateway = createOpenAICompatible({ name: 'gateway', baseURL: `${service.url}/v1`, fetch: payingV2(buyer), includeUsage: true });
    const model = gateway.chatModel(LOCAL_CHAT);
    const whole = await generateText({ model, prompt: 'Tell me about the sea', maxOutputTokens: 16 });
    assert.ok(whole.text.length > 0);
    assert.ok((whole.usage.outputTokens ?? 0) > 0);
    const streamed = streamText({ model, prompt: 'Tell me about the sea', maxOutputTokens: 16 });
    let pieces = 0;
    for await (const piece of streamed.textStream) if (piece) pieces++;
    assert.ok(pieces > 1);
    assert.ok(((await streamed.usage).outputTokens ?? 0) > 0);
    assert.ok((await spent(buyer)) > 0n);
  });
});
