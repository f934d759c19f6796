// The openai-compatible provider path end to end: the real gateway, a local server speaking the OpenAI wire
// protocol, payments by x402-fetch on the sandbox chain. Successes are charged once and their media is
// ours; every upstream fault maps to a clear status and charges nothing; the API key reaches the upstream
// and nothing else.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { wrapFetchWithPayment } from 'x402-fetch';
import { startTestService, postJson } from './support/service.ts';
import { unusedPort } from './support/ports.ts';
import { loadConfig } from '../src/config/load.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import {
  CHAT_PATH,
  CHAT_TEXT,
  CHAT_USAGE,
  IMAGES_PATH,
  SPEECH_PATH,
  startOpenAIUpstream,
  type Fault,
  type OpenAIUpstream,
} from './support/openai-upstream.ts';
import type { RunningService } from '../src/service.ts';

const KEY_ENV = 'OPENAI_UPSTREAM_TEST_API_KEY';
const API_KEY = `sk-test-${randomBytes(16).toString('hex')}`;
const TIMEOUT_MS = 1_500;
const MAX_RETRIES = 2;
const FUNDS = 10_000_000n;

let upstream: OpenAIUpstream;
let service: RunningService;
/** every status line, header and body the gateway sent back, to check no secret ever leaks */
const seen: string[] = [];

const DOWN_CHAT = {
  provider: 'down',
  upstreamModel: 'gone-1',
  capability: 'chat',
  maxTokens: 256,
  defaultMaxTokens: 64,
  price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
};

function models() {
  return [
    {
      id: 'up/chat',
      provider: 'mock',
      upstreamModel: 'mock-chat-1',
      capability: 'chat',
      maxTokens: 256,
      defaultMaxTokens: 64,
      allowedOptions: ['seed', 'top_k'],
      price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
    },
    {
      id: 'up/image',
      provider: 'mock',
      upstreamModel: 'mock-image-b64',
      capability: 'image',
      sizes: ['256x256', '512x512'],
      defaultSize: '256x256',
      maxN: 4,
      allowedOptions: ['quality'],
      price: { perImageBySize: { '256x256': '4000', '512x512': '8000' } },
    },
    {
      id: 'up/image-url',
      provider: 'mock',
      upstreamModel: 'mock-image-url',
      capability: 'image',
      sizes: ['256x256'],
      defaultSize: '256x256',
      maxN: 4,
      price: { perImageBySize: { '256x256': '4000' } },
    },
    // served by a provider that is down: both fall back to up/chat, priced the same
    { ...DOWN_CHAT, id: 'down/chat', fallback: 'up/chat' },
    { ...DOWN_CHAT, id: 'down/chat-long', maxTokens: 1024, fallback: 'up/chat' },
    {
      id: 'up/tts',
      provider: 'mock',
      upstreamModel: 'mock-tts-1',
      capability: 'speech',
      voices: ['alloy', 'echo'],
      defaultVoice: 'alloy',
      // the mock answers wav when asked, and mp3 for anything else
      formats: ['mp3', 'wav', 'flac'],
      maxTextLength: 500,
      allowedOptions: ['speed'],
      price: { perRequest: '1000', perThousandChars: '1000' },
    },
  ];
}

before(async () => {
  upstream = await startOpenAIUpstream();
  process.env[KEY_ENV] = API_KEY;
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: {
        mock: { type: 'openai-compatible', baseURL: upstream.baseURL, apiKeyEnv: KEY_ENV, timeoutMs: TIMEOUT_MS, maxRetries: MAX_RETRIES },
        down: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${await unusedPort()}/v1`, timeoutMs: TIMEOUT_MS, maxRetries: 0 },
      },
      models: models(),
    },
  });
});
after(async () => {
  await service?.stop();
  await upstream?.close();
  delete process.env[KEY_ENV];
});
beforeEach(() => {
  upstream.reset();
  upstream.imageFormats.set('mock-image-url', 'url');
});

async function record(response: Response): Promise<string> {
  const text = await response.clone().text();
  seen.push(`${response.status} ${JSON.stringify([...response.headers])} ${text}`);
  return text;
}

async function quote(path: string, body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  await record(response);
  assert.equal(response.status, 402, await response.clone().text());
  const payment = (await response.json()) as { accepts: { maxAmountRequired: string }[] };
  return BigInt(payment.accepts[0]!.maxAmountRequired);
}

/** Pays with x402-fetch 1.x from a freshly funded buyer; returns the response and the buyer's balance after. */
async function pay(path: string, body: unknown): Promise<{ response: Response; text: string; spent: bigint }> {
  const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
  const response = await wrapFetchWithPayment(fetch, buyer)(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
    body: JSON.stringify(body),
  });
  const text = await record(response);
  return { response, text, spent: FUNDS - (await balanceOf(service, 'base', buyer.address)) };
}

async function fetchMedia(url: string): Promise<{ response: Response; bytes: Buffer }> {
  const response = await fetch(url);
  await record(response);
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

function assertKeyOnlyUpstream(path: string): void {
  const requests = upstream.received(path);
  assert.ok(requests.length > 0, `upstream received no request on ${path}`);
  for (const request of requests) {
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    assert.ok(!request.raw.includes(API_KEY), 'the key travels in the header only, never in the body');
  }
}

describe('successful upstream calls are paid once and their media is ours', () => {
  test('chat: the upstream answer and its own token count; only allowed options reach the upstream', async () => {
    const body = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32, options: { seed: 7, top_k: 3 } };
    const price = await quote('/api/v1/ai/chat', body);
    const { response, text, spent } = await pay('/api/v1/ai/chat', body);
    assert.equal(response.status, 200, text);
    const result = JSON.parse(text) as { model: string; response: string; usage: { tokens: number } };
    assert.equal(result.model, 'up/chat');
    assert.equal(result.response, CHAT_TEXT);
    assert.equal(result.usage.tokens, CHAT_USAGE.total_tokens);
    assert.equal(spent, price);
    assert.ok(response.headers.get('x-payment-response'));

    const [sent] = upstream.received(CHAT_PATH);
    assert.equal(upstream.received(CHAT_PATH).length, 1);
    assert.equal(sent!.body!.model, 'mock-chat-1');
    assert.equal(sent!.body!.max_tokens, 32);
    assert.equal(sent!.body!.seed, 7);
    assert.equal(sent!.body!.top_k, 3);
    assert.deepEqual(sent!.body!.messages, [{ role: 'user', content: 'Tell me about the sea' }]);
    assert.doesNotMatch(sent!.raw, /base_?url|api_?key|127\.0\.0\.1/i);
    assertKeyOnlyUpstream(CHAT_PATH);
  });

  test('chat: a conversation with system and assistant turns reaches the upstream whole and in order', async () => {
    const messages = [
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
    ];
    const body = { model: 'up/chat', messages, prompt: 'Tell me about the sea', max_tokens: 32 };
    const { response, text, spent } = await pay('/api/v1/ai/chat', body);
    assert.equal(response.status, 200, text);
    assert.equal((JSON.parse(text) as { response: string }).response, CHAT_TEXT);
    assert.ok(spent > 0n);
    const [sent] = upstream.received(CHAT_PATH);
    assert.deepEqual(sent!.body!.messages, [...messages, { role: 'user', content: 'Tell me about the sea' }]);
  });

  test('options that would redirect or re-authenticate the call are refused before payment or upstream', async () => {
    for (const options of [{ base_url: 'http://evil.example' }, { api_key: 'x' }, { headers: 'x' }, { temperature: 1 }]) {
      const response = await postJson(`${service.url}/api/v1/ai/chat`, { model: 'up/chat', prompt: 'hi', options }, { 'X-Network': 'base' });
      await record(response);
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { field: string }).field, `options.${Object.keys(options)[0]}`);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('images answered as b64_json: stored, served from our /media URLs', async () => {
    const body = { model: 'up/image', prompt: 'a lighthouse at dusk', n: 2, size: '512x512', options: { quality: 'hd' } };
    const price = await quote('/api/v1/ai/images', body);
    const { response, text, spent } = await pay('/api/v1/ai/images', body);
    assert.equal(response.status, 200, text);
    const result = JSON.parse(text) as { model: string; images: string[] };
    assert.equal(result.images.length, 2);
    assert.equal(spent, price);
    for (const url of result.images) {
      assert.match(url, new RegExp(`^${service.url}/media/[A-Za-z0-9_-]{22}\\.png$`));
      const { response: image, bytes } = await fetchMedia(url);
      assert.equal(image.status, 200);
      assert.equal(image.headers.get('content-type'), 'image/png');
      assert.deepEqual(bytes, upstream.png('512x512'));
    }
    const [sent] = upstream.received(IMAGES_PATH);
    assert.equal(sent!.body!.model, 'mock-image-b64');
    assert.equal(sent!.body!.n, 2);
    assert.equal(sent!.body!.size, '512x512');
    assert.equal(sent!.body!.quality, 'hd');
    assertKeyOnlyUpstream(IMAGES_PATH);
  });

  test('images answered as url: downloaded and re-hosted, the upstream URL never passed through', async () => {
    const body = { model: 'up/image-url', prompt: 'a lighthouse at dawn', n: 2 };
    const { response, text, spent } = await pay('/api/v1/ai/images', body);
    assert.equal(response.status, 200, text);
    assert.ok(spent > 0n);
    assert.ok(!text.includes(upstream.url), 'no upstream URL in the answer');
    const result = JSON.parse(text) as { images: string[] };
    assert.equal(result.images.length, 2);
    for (const url of result.images) {
      assert.ok(url.startsWith(`${service.url}/media/`), url);
      const { response: image, bytes } = await fetchMedia(url);
      assert.equal(image.headers.get('content-type'), 'image/png');
      assert.deepEqual(bytes, upstream.png('256x256'));
    }
    assert.equal(upstream.received(IMAGES_PATH).length, 1);
    assert.equal(upstream.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/files/')).length, 2, 'each image fetched once');
  });

  test('image URLs on another origin at a private address are not fetched (502, nothing charged)', async () => {
    upstream.imageUrlBase = upstream.url.replace('127.0.0.1', 'localhost');
    const { response, text, spent } = await pay('/api/v1/ai/images', { model: 'up/image-url', prompt: 'x' });
    assert.equal(response.status, 502, text);
    assert.equal(spent, 0n);
    assert.equal(upstream.requests.filter((r) => r.method === 'GET').length, 0);
    assert.ok(!text.includes('localhost'));
  });

  test('an image URL whose host NAME resolves to a loopback address is not fetched (502, nothing charged)', async (t) => {
    // the machine's own host name resolves (through /etc/hosts) to one of its addresses, loopback or private:
    // a server listening there stands for an internal service the URL tries to reach
    const name = hostname();
    const resolved = await lookup(name).catch(() => undefined);
    if (!resolved) return t.skip(`${name} does not resolve here`);
    let fetched = 0;
    const internal = createServer((_, res) => {
      fetched++;
      res.writeHead(200, { 'Content-Type': 'image/png' }).end(upstream.png('256x256'));
    });
    await new Promise<void>((resolve) => internal.listen(0, resolved.address, resolve));
    try {
      upstream.imageUrlBase = `http://${name}:${(internal.address() as AddressInfo).port}`;
      const { response, text, spent } = await pay('/api/v1/ai/images', { model: 'up/image-url', prompt: 'x', size: '256x256' });
      assert.equal(response.status, 502, text);
      assert.equal(spent, 0n);
      assert.equal(fetched, 0, 'the internal server was never reached');
    } finally {
      await new Promise((resolve) => internal.close(resolve));
    }
  });

  test('images that are not what was paid for fail the call: 502, nothing charged', async () => {
    const answers: [string, string][] = [
      ['an HTML error page', Buffer.from('<html>error page</html>').toString('base64')],
      ['an empty string', ''],
      ['a PNG cut short', upstream.png('256x256').subarray(0, 60).toString('base64')],
      ['a PNG of another size', upstream.png('4x4').toString('base64')],
    ];
    for (const [what, b64] of answers) {
      upstream.fail(IMAGES_PATH, { kind: 'status', status: 200, body: { created: 1, data: [{ b64_json: b64 }] } });
      const { response, text, spent } = await pay('/api/v1/ai/images', { model: 'up/image', prompt: 'x', size: '256x256' });
      assert.equal(response.status, 502, `${what}: ${text}`);
      assert.equal((JSON.parse(text) as { code: string }).code, 'upstream_error', what);
      assert.equal(spent, 0n, `${what}: nothing charged`);
    }
    const again = await pay('/api/v1/ai/images', { model: 'up/image', prompt: 'y' });
    assert.equal(again.response.status, 200, `a well-formed answer is paid for as before: ${again.text}`);
  });

  test('speech: the audio bytes at our own /media URL, with the right Content-Type', async () => {
    const body = { model: 'up/tts', text: 'Paid speech from an upstream.', voice: 'echo', options: { speed: 1.25 } };
    const price = await quote('/api/v1/ai/tts', body);
    const { response, text, spent } = await pay('/api/v1/ai/tts', body);
    assert.equal(response.status, 200, text);
    assert.equal(spent, price);
    const result = JSON.parse(text) as { audioUrl: string };
    assert.match(result.audioUrl, new RegExp(`^${service.url}/media/[A-Za-z0-9_-]{22}\\.mp3$`));
    const { response: audio, bytes } = await fetchMedia(result.audioUrl);
    assert.equal(audio.headers.get('content-type'), 'audio/mpeg');
    assert.equal(audio.headers.get('content-length'), String(upstream.mp3.length));
    assert.deepEqual(bytes, upstream.mp3);
    const [sent] = upstream.received(SPEECH_PATH);
    assert.equal(sent!.body!.model, 'mock-tts-1');
    assert.equal(sent!.body!.input, body.text);
    assert.equal(sent!.body!.voice, 'echo');
    assert.equal(sent!.body!.speed, 1.25);
    assert.equal(sent!.body!.response_format, 'mp3', 'the model default format');
    assertKeyOnlyUpstream(SPEECH_PATH);
  });

  test('speech: the format asked for reaches the upstream as response_format, and is what is served', async () => {
    const body = { model: 'up/tts', text: 'Paid speech as WAV.', format: 'wav' };
    const price = await quote('/api/v1/ai/tts', body);
    assert.equal(price, await quote('/api/v1/ai/tts', { ...body, format: 'mp3' }), 'the format does not change the price');
    const { response, text, spent } = await pay('/api/v1/ai/tts', body);
    assert.equal(response.status, 200, text);
    assert.equal(spent, price);
    const { response: audio, bytes } = await fetchMedia((JSON.parse(text) as { audioUrl: string }).audioUrl);
    assert.equal(audio.headers.get('content-type'), 'audio/wav');
    assert.deepEqual(bytes, upstream.wav);
    assert.equal(upstream.received(SPEECH_PATH)[0]!.body!.response_format, 'wav');
  });

  test('speech that is not audio fails the call: 502, nothing charged', async () => {
    const answers: [string, Fault][] = [
      ['a JSON error with status 200', { kind: 'status', status: 200, body: { error: { message: 'quota exceeded' } } }],
      ['an empty body', { kind: 'status', status: 200, body: '' }],
      ['a body cut short as JSON', { kind: 'malformed' }],
      ['an MP3 whose last frame is cut', { kind: 'status', status: 200, headers: { 'Content-Type': 'audio/mpeg' }, raw: upstream.mp3.subarray(0, upstream.mp3.length - 100) }],
    ];
    for (const [what, fault] of answers) {
      upstream.fail(SPEECH_PATH, fault);
      const { response, text, spent } = await pay('/api/v1/ai/tts', { model: 'up/tts', text: 'Say something.' });
      assert.equal(response.status, 502, `${what}: ${text}`);
      assert.equal(spent, 0n, `${what}: nothing charged`);
    }
  });
});

describe('upstream faults: a clear status, and nothing is charged', () => {
  const chat = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32 };
  const cases: {
    name: string;
    path: string;
    endpoint: string;
    body: unknown;
    fault: Fault;
    times: number;
    status: number;
    code: string;
    attempts: number;
  }[] = [
    {
      name: '429 (with retry-after) on every attempt -> 503 upstream_unavailable after the configured retries',
      path: CHAT_PATH,
      endpoint: '/api/v1/ai/chat',
      body: chat,
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      times: 99,
      status: 503,
      code: 'upstream_unavailable',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: '500 on every attempt -> 502 upstream_error after the configured retries',
      path: CHAT_PATH,
      endpoint: '/api/v1/ai/chat',
      body: chat,
      fault: { kind: 'status', status: 500, headers: { 'retry-after-ms': '20' } },
      times: 99,
      status: 502,
      code: 'upstream_error',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'an answer slower than the provider timeout -> 504 upstream_timeout',
      path: CHAT_PATH,
      endpoint: '/api/v1/ai/chat',
      body: chat,
      fault: { kind: 'delay', ms: TIMEOUT_MS + 2_000 },
      times: 1,
      status: 504,
      code: 'upstream_timeout',
      attempts: 1,
    },
    {
      name: 'malformed JSON -> 502 upstream_error',
      path: CHAT_PATH,
      endpoint: '/api/v1/ai/chat',
      body: chat,
      fault: { kind: 'malformed' },
      times: 1,
      status: 502,
      code: 'upstream_error',
      attempts: 1,
    },
    {
      // the AI SDK counts a dropped connection (UND_ERR_SOCKET) as retryable, so every attempt is cut here;
      // retry-after-ms only shortens its backoff (2 s, 4 s by default) to fit the test's short timeout
      name: 'connection cut mid-body (chat), on every attempt -> 502 upstream_error',
      path: CHAT_PATH,
      endpoint: '/api/v1/ai/chat',
      body: chat,
      fault: { kind: 'cut', headers: { 'retry-after-ms': '20' } },
      times: 99,
      status: 502,
      code: 'upstream_error',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'connection cut mid-body (speech audio), on every attempt -> 502 upstream_error',
      path: SPEECH_PATH,
      endpoint: '/api/v1/ai/tts',
      body: { model: 'up/tts', text: 'Cut me off.' },
      fault: { kind: 'cut', headers: { 'retry-after-ms': '20' } },
      times: 99,
      status: 502,
      code: 'upstream_error',
      attempts: 1 + MAX_RETRIES,
    },
    {
      name: 'an empty answer (chat) -> 502 upstream_error',
      path: CHAT_PATH,
      endpoint: '/api/v1/ai/chat',
      body: chat,
      fault: {
        kind: 'status',
        status: 200,
        body: { id: 'chatcmpl-empty', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: ' \u200b\n' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
      },
      times: 1,
      status: 502,
      code: 'upstream_error',
      attempts: 1,
    },
    {
      name: 'malformed JSON (images) -> 502 upstream_error',
      path: IMAGES_PATH,
      endpoint: '/api/v1/ai/images',
      body: { model: 'up/image', prompt: 'x' },
      fault: { kind: 'malformed' },
      times: 1,
      status: 502,
      code: 'upstream_error',
      attempts: 1,
    },
  ];

  for (const c of cases) {
    test(c.name, async () => {
      upstream.fail(c.path, c.fault, c.times);
      const started = Date.now();
      const { response, text, spent } = await pay(c.endpoint, c.body);
      assert.equal(response.status, c.status, text);
      assert.equal((JSON.parse(text) as { code: string }).code, c.code);
      assert.equal(spent, 0n, 'the payer balance is unchanged');
      assert.equal(response.headers.get('x-payment-response'), null, 'no settlement receipt');
      assert.equal(upstream.received(c.path).length, c.attempts, 'upstream attempts');
      if (c.status === 503) assert.ok(response.headers.get('retry-after'));
      if (c.code === 'upstream_timeout') assert.ok(Date.now() - started < TIMEOUT_MS + 1_500, 'answered soon after the timeout');
      assert.ok(!text.includes(upstream.url) && !text.includes('scripted'), 'no upstream internals in the error');
    });
  }

  test('audio in another format than asked for -> 502 upstream_error, nothing charged', async () => {
    const { response, text, spent } = await pay('/api/v1/ai/tts', { model: 'up/tts', text: 'Say it in FLAC.', format: 'flac' });
    assert.equal(response.status, 502, text);
    assert.equal((JSON.parse(text) as { code: string }).code, 'upstream_error');
    assert.match(text, /returned mp3 audio, not flac/);
    assert.equal(spent, 0n);
    assert.equal(response.headers.get('x-payment-response'), null);
    assert.equal(upstream.received(SPEECH_PATH)[0]!.body!.response_format, 'flac');
  });

  test('a connection cut once is retried and then succeeds, charged once', async () => {
    upstream.fail(CHAT_PATH, { kind: 'cut', headers: { 'retry-after-ms': '20' } }, 1);
    const { response, text, spent } = await pay('/api/v1/ai/chat', chat);
    assert.equal(response.status, 200, text);
    assert.ok(spent > 0n);
    assert.equal(upstream.received(CHAT_PATH).length, 2);
  });

  test('a transient 429 is retried and then succeeds, charged once', async () => {
    upstream.fail(CHAT_PATH, { kind: 'status', status: 429, headers: { 'retry-after': '0' } }, 1);
    const price = await quote('/api/v1/ai/chat', chat);
    const { response, text, spent } = await pay('/api/v1/ai/chat', chat);
    assert.equal(response.status, 200, text);
    assert.equal(spent, price);
    assert.equal(upstream.received(CHAT_PATH).length, 2);
  });
});

describe('secrets', () => {
  test('the API key never appears in any response the gateway sent', () => {
    assert.ok(seen.length > 10, `checked ${seen.length} responses`);
    for (const text of seen) assert.ok(!text.includes(API_KEY), `key leaked in: ${text.slice(0, 200)}`);
  });
});

describe('fallback to another model when an upstream fails', () => {
  test('the fallback answers, the body names it, and the client pays the price it was quoted, once', async () => {
    const body = { model: 'down/chat', prompt: 'Tell me about the sea', max_tokens: 32 };
    const price = await quote('/api/v1/ai/chat', body);
    const { response, text, spent } = await pay('/api/v1/ai/chat', body);
    assert.equal(response.status, 200, text);
    const result = JSON.parse(text) as { model: string; response: string };
    assert.equal(result.model, 'up/chat');
    assert.equal(result.response, CHAT_TEXT);
    assert.equal(spent, price);
    assert.equal(upstream.received(CHAT_PATH).length, 1);
  });

  test('no fallback where the request is not valid for the fallback model: 502, nothing charged', async () => {
    const body = { model: 'down/chat-long', prompt: 'Tell me about the sea', max_tokens: 512 };
    const { response, text, spent } = await pay('/api/v1/ai/chat', body);
    assert.equal(response.status, 502, text);
    assert.equal(JSON.parse(text).code, 'upstream_error');
    assert.equal(spent, 0n);
    assert.equal(upstream.received(CHAT_PATH).length, 0);
  });

  test('a fallback priced higher than its model is refused at startup', () => {
    const pricier = { ...DOWN_CHAT, id: 'pricier', provider: 'mock', price: { ...DOWN_CHAT.price, perRequest: '1001' } };
    const config = { providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL } }, models: [{ ...DOWN_CHAT, provider: 'mock', id: 'cheap', fallback: 'pricier' }, pricier] };
    assert.throws(() => loadConfig({}, config), /model cheap: fallback pricier is priced higher/);
  });
});
