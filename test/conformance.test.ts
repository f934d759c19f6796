// Black-box conformance with the service spec (sections 2, 4, 5, 7, 8, 9) and the x402 v1 contract,
// against the real server on a free port. Every requirement is also parsed with the official v1 client's own
// schema (x402-fetch validates `accepts` with it; its response schema types `error` as a reason enum that even
// the reference server's "X-PAYMENT header is required" does not meet, so the client does not apply it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { PaymentRequirementsSchema } from 'x402/types';
import { startTestService, postJson } from './support/service.ts';
import type { RunningService } from '../src/service.ts';
import { NETWORKS, NETWORK_NAMES, type NetworkName } from '../src/x402/networks.ts';

const ALL_NETWORKS: NetworkName[] = [...NETWORK_NAMES];

const ENDPOINTS = [
  { path: '/api/v1/ai/chat', description: 'Run a chat model', body: { model: 'local/demo-bigram', prompt: 'Hello there' } },
  { path: '/api/v1/ai/images', description: 'Generate images from a prompt', body: { prompt: 'a red fox', n: 2, size: '256x256' } },
  { path: '/api/v1/ai/tts', description: 'Convert text to speech', body: { text: 'Hello world' } },
] as const;

let service: RunningService;
before(async () => {
  // this test's own connections stand for a reverse proxy in front (see 'behind a proxy' below)
  service = await startTestService({ networks: ALL_NETWORKS, config: { trustedProxies: ['127.0.0.1'] } });
});
after(() => service.stop());

async function unpaid(path: string, body: unknown, network?: string) {
  const response = await postJson(`${service.url}${path}`, body, network ? { 'X-Network': network } : {});
  return { response, body: (await response.json()) as Record<string, any> };
}

describe('402 Payment Required (spec 4 rule 1-2, 7)', () => {
  for (const endpoint of ENDPOINTS) {
    for (const network of ALL_NETWORKS) {
      test(`${endpoint.path} on ${network} without X-PAYMENT lists that network's requirement`, async () => {
        const { response, body } = await unpaid(endpoint.path, endpoint.body, network);
        assert.equal(response.status, 402);
        assert.match(response.headers.get('content-type') ?? '', /application\/json/);
        assert.equal(body.x402Version, 1);
        assert.equal(body.error, 'X-PAYMENT header is required');
        assert.equal(body.accepts.length, 1);
        const [requirement] = body.accepts;
        assert.deepEqual(PaymentRequirementsSchema.safeParse(requirement).error, undefined);
        assert.equal(requirement.scheme, 'exact');
        assert.equal(requirement.network, network);
        assert.match(requirement.maxAmountRequired, /^[1-9]\d*$/);
        assert.equal(requirement.resource, `${service.url}${endpoint.path}`);
        assert.equal(requirement.description, endpoint.description);
        assert.equal(requirement.mimeType, 'application/json');
        assert.equal(requirement.payTo, service.rails.get(network)!.payTo);
        assert.equal(requirement.asset, service.rails.get(network)!.asset);
        assert.ok(Number.isInteger(requirement.maxTimeoutSeconds) && requirement.maxTimeoutSeconds > 0);
        assert.deepEqual(
          { ...requirement.outputSchema.input, bodyFields: undefined },
          { type: 'http', method: 'POST', discoverable: true, bodyType: 'json', bodyFields: undefined },
        );
        assert.equal(typeof requirement.outputSchema.input.bodyFields, 'object');
        const spec = NETWORKS[network];
        if (spec.family === 'evm') assert.deepEqual(requirement.extra, spec.eip712);
        else assert.deepEqual(Object.keys(requirement.extra), ['feePayer']);
        assert.equal(requirement.asset, spec.usdc, 'the sandbox token sits at the real USDC address');
      });
    }
  }

  test('missing X-Network still gets 402, listing every enabled network and naming the header', async () => {
    const { response, body } = await unpaid('/api/v1/ai/chat', ENDPOINTS[0].body);
    assert.equal(response.status, 402);
    assert.match(body.error, /^X-PAYMENT header is required/);
    assert.match(body.error, /X-Network header is required/);
    for (const network of ALL_NETWORKS) assert.match(body.error, new RegExp(network));
    assert.deepEqual(body.accepts.map((a: { network: string }) => a.network).sort(), [...ALL_NETWORKS].sort());
  });

  test('an unknown X-Network without a proof still gets 402 with every enabled network', async () => {
    const { response, body } = await unpaid('/api/v1/ai/tts', ENDPOINTS[2].body, 'dogecoin');
    assert.equal(response.status, 402);
    assert.match(body.error, /"dogecoin" is not a supported X-Network/);
    assert.equal(body.accepts.length, ALL_NETWORKS.length);
    // a long one is quoted short: the reason also travels base64-encoded in PAYMENT-REQUIRED, under clients' header limits
    const long = await unpaid('/api/v1/ai/tts', ENDPOINTS[2].body, 'b'.repeat(8000));
    assert.equal(long.response.status, 402);
    assert.match(long.body.error, new RegExp(`"${'b'.repeat(48)}…" is not a supported X-Network`));
    assert.ok(long.response.headers.get('PAYMENT-REQUIRED')!.length < response.headers.get('PAYMENT-REQUIRED')!.length + 100);
  });

  test('the price follows the body and is an exact integer', async () => {
    const small = await unpaid('/api/v1/ai/images', { prompt: 'x', n: 1, size: '256x256' }, 'base');
    const large = await unpaid('/api/v1/ai/images', { prompt: 'x', n: 3, size: '256x256' }, 'base');
    assert.equal(BigInt(large.body.accepts[0].maxAmountRequired), 3n * BigInt(small.body.accepts[0].maxAmountRequired));
  });

  test('behind a configured proxy, resource uses X-Forwarded-Proto and X-Forwarded-Host', async () => {
    const response = await postJson(`${service.url}/api/v1/ai/chat`, ENDPOINTS[0].body, {
      'X-Network': 'base',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'ai.example.com',
    });
    const body = (await response.json()) as { accepts: { resource: string }[] };
    assert.equal(body.accepts[0]!.resource, 'https://ai.example.com/api/v1/ai/chat');
  });
});

describe('other errors: one JSON shape, the right status, never a 500', () => {
  const cases: { name: string; path: string; body: unknown; headers?: Record<string, string>; status: number; field?: string }[] = [
    { name: 'malformed JSON', path: '/api/v1/ai/chat', body: '{"model": ', status: 400 },
    { name: 'empty body', path: '/api/v1/ai/chat', body: '', status: 400 },
    { name: 'a JSON array', path: '/api/v1/ai/chat', body: [], status: 400 },
    { name: 'wrong Content-Type', path: '/api/v1/ai/chat', body: 'model=x', headers: { 'Content-Type': 'text/plain' }, status: 415 },
    { name: 'body over the size limit', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'x'.repeat(300_000) }, status: 413 },
    { name: 'chat without model', path: '/api/v1/ai/chat', body: { prompt: 'hi' }, status: 400, field: 'model' },
    { name: 'chat without prompt, messages or input', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram' }, status: 400, field: 'prompt' },
    { name: 'temperature above 2', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', temperature: 2.01 }, status: 400, field: 'temperature' },
    { name: 'temperature below 0', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', temperature: -0.1 }, status: 400, field: 'temperature' },
    { name: 'max_tokens 0', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', max_tokens: 0 }, status: 400, field: 'max_tokens' },
    { name: 'max_tokens over the model ceiling', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', max_tokens: 1_000_000 }, status: 400, field: 'max_tokens' },
    { name: 'max_tokens not an integer', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', max_tokens: 1.5 }, status: 400, field: 'max_tokens' },
    { name: 'a message with an unknown role', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', messages: [{ role: 'wizard', content: 'x' }] }, status: 400, field: 'messages.0.role' },
    { name: 'unknown model', path: '/api/v1/ai/chat', body: { model: 'gpt-17', prompt: 'hi' }, status: 400, field: 'model' },
    { name: 'an option the model does not allow', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', options: { baseURL: 'http://evil' } }, status: 400, field: 'options.baseURL' },
    { name: 'an unknown field', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', maxTokens: 3 }, status: 400, field: 'maxTokens' },
    { name: 'an unknown field in a message', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'x', name: 'bob' }] }, status: 400, field: 'messages.0.name' },
    { name: 'a __proto__ key', path: '/api/v1/ai/chat', body: '{"model":"local/demo-bigram","prompt":"hi","options":{"__proto__":{"seed":1}}}', status: 400, field: '__proto__' },
    { name: 'a __proto__ key spelled with an escape', path: '/api/v1/ai/chat', body: '{"model":"local/demo-bigram","prompt":"hi","\\u005f_proto__":{}}', status: 400, field: '__proto__' },
    { name: 'a seed that is not an integer', path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'hi', options: { seed: 'abc' } }, status: 400, field: 'options.seed' },
    { name: 'a negative image seed', path: '/api/v1/ai/images', body: { prompt: 'x', options: { seed: -1 } }, status: 400, field: 'options.seed' },
    { name: 'images without prompt', path: '/api/v1/ai/images', body: { n: 1 }, status: 400, field: 'prompt' },
    { name: 'n over the model maximum', path: '/api/v1/ai/images', body: { prompt: 'x', n: 99 }, status: 400, field: 'n' },
    { name: 'n zero', path: '/api/v1/ai/images', body: { prompt: 'x', n: 0 }, status: 400, field: 'n' },
    { name: 'a size the model does not offer', path: '/api/v1/ai/images', body: { prompt: 'x', size: '333x333' }, status: 400, field: 'size' },
    { name: 'a malformed size', path: '/api/v1/ai/images', body: { prompt: 'x', size: 'big' }, status: 400, field: 'size' },
    { name: 'tts without text', path: '/api/v1/ai/tts', body: { voice: 'en' }, status: 400, field: 'text' },
    { name: 'an unknown voice', path: '/api/v1/ai/tts', body: { text: 'hi', voice: 'klingon' }, status: 400, field: 'voice' },
    { name: 'text over the model limit', path: '/api/v1/ai/tts', body: { text: 'a'.repeat(5000) }, status: 400, field: 'text' },
    { name: 'text of whitespace only', path: '/api/v1/ai/tts', body: { text: ' \n\t ' }, status: 400, field: 'text' },
    { name: 'text of zero-width spaces and punctuation only', path: '/api/v1/ai/tts', body: { text: '\u200b\u200b...!' }, status: 400, field: 'text' },
    { name: 'a speed of 0', path: '/api/v1/ai/tts', body: { text: 'hi', options: { speed: 0 } }, status: 400, field: 'options.speed' },
    { name: 'a speed that is not a number', path: '/api/v1/ai/tts', body: { text: 'hi', options: { speed: 'fast' } }, status: 400, field: 'options.speed' },
    { name: 'a pitch that is not a number', path: '/api/v1/ai/tts', body: { text: 'hi', options: { pitch: true } }, status: 400, field: 'options.pitch' },
    { name: 'a format the model does not offer', path: '/api/v1/ai/tts', body: { text: 'hi', format: 'opus' }, status: 400, field: 'format' },
    { name: 'an unknown format', path: '/api/v1/ai/tts', body: { text: 'hi', format: 'MP3' }, status: 400, field: 'format' },
    { name: 'a format that is not a string', path: '/api/v1/ai/tts', body: { text: 'hi', format: 3 }, status: 400, field: 'format' },
    { name: 'a format in options', path: '/api/v1/ai/tts', body: { text: 'hi', options: { format: 'mp3' } }, status: 400, field: 'options.format' },
    // refused by Node's HTTP parser before any route runs, still in the one JSON shape
    { name: 'headers over 16 KiB', path: '/api/v1/ai/tts', body: { text: 'hi' }, headers: { 'X-PAYMENT': 'A'.repeat(20_000) }, status: 431 },
  ];
  for (const c of cases) {
    test(`${c.name} -> ${c.status}`, async () => {
      const response = await postJson(`${service.url}${c.path}`, c.body, { 'X-Network': 'base', ...c.headers });
      assert.equal(response.status, c.status);
      const body = (await response.json()) as { error: string; code: string; field?: string };
      assert.equal(typeof body.error, 'string');
      assert.equal(typeof body.code, 'string');
      if (c.field) assert.equal(body.field, c.field);
    });
  }

  test('JSON nested thousands of levels deep, on every chat surface: a 400, never a 500 (or a stack overflow while pricing)', async () => {
    const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const model = 'local/demo-bigram';
    const toolTurn = (input: string) => `[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"f","input":${input}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"r"}]}]`;
    const bodies: [string, string][] = [
      ['/v1/messages', `{"model":"${model}","max_tokens":10,"messages":${toolTurn(deep(5_000))}}`],
      ['/v1/messages/count_tokens', `{"model":"${model}","messages":${toolTurn(deep(5_000))}}`],
      ['/v1/messages/count_tokens', `{"model":"${model}","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object","properties":${deep(5_000)}}}]}`],
      ['/api/v1/ai/chat', `{"model":"${model}","prompt":"hi","options":${deep(300)}}`],
    ];
    for (const [path, body] of bodies) {
      const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
      assert.equal(response.status, 400, path);
      assert.match(await response.text(), /nests deeper than 256 levels/, path);
    }
    // a tool call's arguments are a string: nested too deep, they are kept as that text (priced by its length), not parsed
    const calls = [
      ['/v1/chat/completions', { model, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: deep(5_000) } }] }, { role: 'tool', tool_call_id: 'x', content: 'r' }] }],
      ['/v1/responses', { model, input: [{ role: 'user', content: 'q' }, { type: 'function_call', call_id: 'x', name: 'f', arguments: deep(5_000) }, { type: 'function_call_output', call_id: 'x', output: 'r' }] }],
    ] as const;
    for (const [path, body] of calls) assert.equal((await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' })).status, 402, path);
  });

  test('a chunked body past the limit (no size declared) is a 413, not a client that left, on every surface', async () => {
    /** a JSON body sent in chunks, without end, until the gateway answers */
    const endless = (path: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const sending = request(`${service.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } });
        let answered = false;
        sending.on('response', async (response) => {
          answered = true;
          let text = '';
          for await (const piece of response) text += piece;
          resolve({ status: response.statusCode!, text });
          sending.destroy();
        });
        sending.on('error', (error) => answered || reject(error));
        sending.write('{"prompt":"');
        const pump = () => {
          while (!answered && sending.write(chunk));
          if (!answered) sending.once('drain', pump);
        };
        pump();
      });
    for (const [path, limit] of [['/api/v1/ai/chat', '262144'], ['/v1/chat/completions', '33554432'], ['/mcp', '262144']] as const) {
      const answer = await endless(path);
      assert.equal(answer.status, 413, `${path}: ${answer.text}`);
      assert.match(answer.text, new RegExp(`request body must be at most ${limit} bytes`), path);
    }
  });

  test('a paid request whose body is invalid gets 400, whatever the proof', async () => {
    const response = await postJson(`${service.url}/api/v1/ai/chat`, { model: 'local/demo-bigram' }, { 'X-Network': 'base', 'X-PAYMENT': 'e30=' });
    assert.equal(response.status, 400);
    const format = await postJson(`${service.url}/api/v1/ai/tts`, { text: 'hi', format: 'flac' }, { 'X-Network': 'base', 'X-PAYMENT': 'e30=' });
    assert.equal(format.status, 400);
    assert.deepEqual(await format.json(), {
      error: 'format: flac is not offered by model espeak-ng (formats: wav, mp3, ogg)',
      code: 'invalid_request',
      field: 'format',
    });
  });

  test('tts: every format the model offers is quoted at the same price', async () => {
    const prices = new Set<string>();
    for (const format of [undefined, 'wav', 'mp3', 'ogg']) {
      const { response, body } = await unpaid('/api/v1/ai/tts', { text: 'Hello world', format }, 'base');
      assert.equal(response.status, 402);
      prices.add(body.accepts[0].maxAmountRequired);
    }
    assert.equal(prices.size, 1);
  });

  test('a proof naming another network than X-Network is a 400 naming the supported values', async () => {
    const proof = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'polygon', payload: {} })).toString('base64');
    const response = await postJson(`${service.url}/api/v1/ai/chat`, ENDPOINTS[0].body, { 'X-Network': 'base', 'X-PAYMENT': proof });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { code: string }).code, 'network_mismatch');
  });

  test('a proof for an unsupported network is a 400 naming the supported values', async () => {
    const proof = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'avalanche', payload: {} })).toString('base64');
    const response = await postJson(`${service.url}/api/v1/ai/chat`, ENDPOINTS[0].body, { 'X-PAYMENT': proof });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { code: string; error: string };
    assert.equal(body.code, 'unsupported_network');
    assert.match(body.error, /base-sepolia/);
  });

  test('unknown paths are a JSON 404, wrong methods a JSON 405 with Allow, on every route', async () => {
    for (const [method, path] of [['POST', '/api/v1/ai/video'], ['GET', '/api/v1/ai/video'], ['PUT', '/nowhere']]) {
      const missing = await fetch(`${service.url}${path}`, { method });
      assert.equal(missing.status, 404, `${method} ${path}`);
      assert.equal(((await missing.json()) as { code: string }).code, 'not_found');
    }
    const wrongMethods: [string, string, string][] = [
      ...ENDPOINTS.flatMap(({ path }): [string, string, string][] => [['GET', path, 'POST'], ['PUT', path, 'POST']]),
      ['GET', '/sandbox/faucet', 'POST'],
      ...['/', '/openapi.json', '/docs', '/healthz', '/metrics', '/api/v1/ai/models', '/api/v1/payments/0xabc', '/media/AAAAAAAAAAAAAAAAAAAAAA.png']
        .flatMap((path): [string, string, string][] => [['POST', path, 'GET, HEAD'], ['DELETE', path, 'GET, HEAD']]),
    ];
    for (const [method, path, allow] of wrongMethods) {
      const response = await fetch(`${service.url}${path}`, { method, redirect: 'manual' });
      assert.equal(response.status, 405, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), allow, `${method} ${path}`);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}`);
      assert.deepEqual(await response.json(), { error: `${method} is not allowed here; use ${allow.replaceAll(', ', ' or ')}`, code: 'method_not_allowed' });
    }
    const head = await fetch(`${service.url}/api/v1/ai/chat`, { method: 'HEAD' });
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST');
    const preflight = await fetch(`${service.url}/media/AAAAAAAAAAAAAAAAAAAAAA.png`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://buyer.example', 'Access-Control-Request-Method': 'GET' },
    });
    assert.equal(preflight.status, 204, 'CORS preflights are still answered');
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  });
});

describe('around the endpoints', () => {
  test('GET /openapi.json is OpenAPI 3.1, interface version 1.0, with the three endpoints and no security', async () => {
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as Record<string, any>;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0');
    assert.deepEqual(doc.security, []);
    for (const endpoint of ENDPOINTS) assert.ok(doc.paths[endpoint.path].post.responses['402']);
    assert.ok(doc.components.schemas.Error);
    assert.deepEqual(doc.components.schemas.ChatRequest.required, ['model']);
    assert.equal(doc.components.schemas.SpeechRequest.properties.format.type, 'string');
    const receipt = doc.paths['/api/v1/payments/{id}'].get;
    assert.deepEqual(receipt.parameters.map((p: { name: string }) => p.name), ['id', 'X-Payer-Timestamp', 'X-Payer-Signature']);
    assert.ok(doc.components.schemas.PaymentReceipt.properties.result);
  });

  test('GET /docs is a human page', async () => {
    const response = await fetch(`${service.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /How to pay/);
  });

  test('GET /api/v1/ai/models lists capabilities, limits and prices', async () => {
    const body = (await (await fetch(`${service.url}/api/v1/ai/models`)).json()) as { models: Record<string, any>[] };
    const capabilities = new Set(body.models.map((m) => m.capability));
    assert.deepEqual([...capabilities].sort(), ['chat', 'image', 'speech']);
    const speech = body.models.find((m) => m.capability === 'speech')!;
    assert.ok(speech.voices.length > 1);
    assert.deepEqual([speech.formats, speech.defaultFormat], [['wav', 'mp3', 'ogg'], 'wav']);
    assert.match(speech.label, /WAV.*MP3.*Ogg Vorbis/);
    // the embedded engines say what each option takes
    assert.deepEqual(speech.optionTypes.speed, { type: 'number', minimum: 0.5, maximum: 2.5, description: '1 = normal; the range eSpeak NG speaks at' });
    const chat = body.models.find((m) => m.capability === 'chat')!;
    assert.equal(chat.optionTypes.seed.type, 'integer');
    // prices in atomic units (what 402s carry) and the same in decimal USDC
    assert.deepEqual([chat.price.perRequest, chat.priceUsdc.perRequest], ['1000', '0.001']);
    assert.match(chat.priceText, /^0\.001 USDC per request \+ /);
  });

  test('GET /healthz says sandbox mode and names each sandbox RPC URL', async () => {
    const body = (await (await fetch(`${service.url}/healthz`)).json()) as Record<string, any>;
    assert.equal(body.status, 'ok');
    assert.equal(body.mode, 'sandbox');
    for (const network of ALL_NETWORKS) assert.match(body.sandboxNetworks[network].rpcUrl, /^http:\/\/127\.0\.0\.1:\d+/);
  });

  test('GET /metrics counts requests by route and status', async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    assert.match(text, /http_requests_total\{method="POST",route="\/api\/v1\/ai\/chat",status="402"\} \d+/);
  });

  test('every response carries a request id', async () => {
    const response = await fetch(`${service.url}/healthz`);
    assert.ok(response.headers.get('x-request-id'));
  });
});
