// Discovery (issue 13 item 5), black-box against the real service: /.well-known/x402, x-payment-info in
// /openapi.json and /llms.txt are generated from the catalog and price table, and the advertised price range is
// what real 402s ask at its two ends.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, postJson } from './support/service.ts';
import type { RunningService } from '../src/service.ts';
import { parseUsdc } from '../src/pricing/usdc.ts';
import { NETWORK_NAMES, NETWORKS } from '../src/x402/networks.ts';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import { validateDiscoveryExtension } from '@x402/extensions/bazaar';

// every route of every paid operation, in the table's order: each operation's spec route, then its other dialects
const PAID_PATHS = [
  '/api/v1/ai/chat',
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/messages',
  '/api/v1/ai/images',
  '/v1/images/generations',
  '/api/v1/ai/tts',
  '/v1/audio/speech',
];

async function priceOf(service: RunningService, path: string, body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  const offer = (await response.json()) as { accepts: { maxAmountRequired: string }[] };
  return BigInt(offer.accepts[0]!.maxAmountRequired);
}

describe('discovery with the embedded catalog', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService({
      config: { service: { name: 'Test gateway', description: 'Pay-per-call AI for tests.', tags: ['ai', 'test'] } },
    });
  });
  after(() => service.stop());

  test('GET /.well-known/x402 lists the absolute URL of every paid route and the configured description', async () => {
    const response = await fetch(`${service.url}/.well-known/x402`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(await response.json(), {
      version: 1,
      resources: PAID_PATHS.map((path) => `${service.url}${path}`),
      description: 'Pay-per-call AI for tests.',
      // the same generation as MCP tools (test/mcp.test.ts)
      mcp: {
        url: `${service.url}/mcp`,
        transport: 'streamable-http',
        serverJson: `${service.url}/mcp/server.json`,
        tools: ['chat', 'generate_image', 'text_to_speech'].map((name) => ({ name, resource: `mcp://tool/${name}` })),
      },
    });
  });

  test('every paid operation of /openapi.json carries x-payment-info with a dynamic USD price range', async () => {
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as Record<string, any>;
    for (const path of PAID_PATHS) {
      const info = doc.paths[path].post['x-payment-info'];
      assert.deepEqual(info.protocols, [{ x402: {} }], path);
      assert.equal(info.price.mode, 'dynamic', path);
      assert.equal(info.price.currency, 'USD', path);
      assert.ok(parseUsdc(info.price.min) > 0n && parseUsdc(info.price.min) < parseUsdc(info.price.max), path);
    }
    assert.equal(doc.paths['/api/v1/ai/models'].get['x-payment-info'], undefined, 'free routes are not payable');
  });

  test('the advertised min and max are the prices real 402s ask for the cheapest and dearest bodies', async () => {
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as Record<string, any>;
    const range = (path: string) => doc.paths[path].post['x-payment-info'].price as { min: string; max: string };
    const models = (await (await fetch(`${service.url}/api/v1/ai/models`)).json()) as { models: Record<string, any>[] };
    const image = models.models.find((m) => m.capability === 'image')!;
    const speech = models.models.find((m) => m.capability === 'speech')!;
    const chat = models.models.find((m) => m.capability === 'chat')!;

    const imagePrices = image.sizes.map((size: string) => [size, BigInt(image.price.perImageBySize[size])] as const);
    const cheapest = imagePrices.reduce((a: any, b: any) => (b[1] < a[1] ? b : a));
    const dearest = imagePrices.reduce((a: any, b: any) => (b[1] > a[1] ? b : a));
    assert.equal(await priceOf(service, '/api/v1/ai/images', { prompt: 'x', size: cheapest[0] }), parseUsdc(range('/api/v1/ai/images').min));
    assert.equal(
      await priceOf(service, '/api/v1/ai/images', { prompt: 'x', size: dearest[0], n: image.maxN }),
      parseUsdc(range('/api/v1/ai/images').max),
    );
    assert.equal(await priceOf(service, '/api/v1/ai/tts', { text: 'a' }), parseUsdc(range('/api/v1/ai/tts').min));
    assert.equal(
      await priceOf(service, '/api/v1/ai/tts', { text: 'a'.repeat(speech.maxTextLength) }),
      parseUsdc(range('/api/v1/ai/tts').max),
    );
    assert.equal(await priceOf(service, '/api/v1/ai/chat', { model: chat.id, prompt: '', max_tokens: 1 }), parseUsdc(range('/api/v1/ai/chat').min));
    // chat's max is a bound: the most tokens and the longest prompt the model takes (16 characters per message)
    const longest = await priceOf(service, '/api/v1/ai/chat', {
      model: chat.id,
      messages: [{ role: 'user', content: 'a'.repeat(Math.min(chat.maxInputChars, 100_000) / 2 - 16) }],
      prompt: 'a'.repeat(Math.min(chat.maxInputChars, 100_000) / 2 - 16),
      max_tokens: chat.maxTokens,
    });
    assert.ok(longest <= parseUsdc(range('/api/v1/ai/chat').max));
  });

  test('GET /llms.txt says in plain text what is sold, each model price, and how to pay', async () => {
    const response = await fetch(`${service.url}/llms.txt`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    assert.match(text, /^# Test gateway\n\n> Pay-per-call AI for tests\.\n/);
    for (const path of PAID_PATHS) assert.ok(text.includes(`POST ${service.url}${path}`), path);
    assert.match(text, /model `preview-image`.*256x256 0\.002 USDC/);
    assert.match(text, /model `espeak-ng`.*0\.001 USDC per call \+ 0\.002 USDC per 1,000 characters/);
    assert.match(text, /PAYMENT-SIGNATURE/);
    assert.match(text, /X-PAYMENT/);
    assert.match(text, /base \(eip155:8453\)/);
  });
});

describe('discovery behind a proxy', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService({ config: { publicUrl: 'https://ai.example.com/' } });
  });
  after(() => service.stop());

  test('absolute URLs come from the configured public URL, never from client forwarding headers', async () => {
    const headers = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'http' };
    const wellKnown = (await (await fetch(`${service.url}/.well-known/x402`, { headers })).json()) as { resources: string[] };
    assert.deepEqual(wellKnown.resources, PAID_PATHS.map((path) => `https://ai.example.com${path}`));
    const text = await (await fetch(`${service.url}/llms.txt`, { headers })).text();
    assert.ok(!text.includes('evil.example'));
    assert.ok(text.includes('POST https://ai.example.com/api/v1/ai/chat'));
  });
});

describe('the 402 with every extension, on every network', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService({ networks: [...NETWORK_NAMES] });
  });
  after(() => service.stop());

  for (const [path, body] of [
    ['/api/v1/ai/chat', { model: 'local/demo-bigram', prompt: 'Hello' }],
    ['/api/v1/ai/images', { prompt: 'a red fox' }],
    ['/api/v1/ai/tts', { text: 'Hello world' }],
  ] as const) {
    test(`${path}: PAYMENT-REQUIRED parses with @x402/core, declares bazaar and sign-in-with-x, and stays under 12 KB`, async () => {
      const response = await postJson(`${service.url}${path}`, body); // no X-Network: every network is offered
      assert.equal(response.status, 402);
      const header = response.headers.get('PAYMENT-REQUIRED')!;
      const required = PaymentRequiredV2Schema.parse(decodePaymentRequiredHeader(header));
      // every network's exact, each EVM network's batch-settlement and auth-capture, and for chat each EVM
      // network's upto: the same schemes as with X-Network
      const evm = NETWORK_NAMES.filter((name) => NETWORKS[name].family === 'evm').length;
      assert.equal(required.accepts.length, NETWORK_NAMES.length + 2 * evm + (path === '/api/v1/ai/chat' ? evm : 0));
      assert.deepEqual([required.resource.serviceName, (required.resource as { tags?: string[] }).tags], [
        service.config.service.name,
        service.config.service.tags,
      ]);
      assert.deepEqual(Object.keys(required.extensions ?? {}).sort(), ['bazaar', 'sign-in-with-x', ...extraExtensions(required)].sort());
      assert.deepEqual(validateDiscoveryExtension(required.extensions!.bazaar as never), { valid: true });
      assert.equal((required.extensions!['sign-in-with-x'] as { supportedChains: unknown[] }).supportedChains.length, NETWORK_NAMES.length);
      // the worst case (no X-Network: all six networks, with chat's upto, batch-settlement and auth-capture on the
      // four EVM ones) stays under 15 KB, within the 16 KB of response headers Node's and undici's HTTP clients take
      // (a proxy in front needs buffers that large: docs/going-live.md); one network is far less
      assert.ok(header.length < 15 * 1024, `PAYMENT-REQUIRED is ${header.length} bytes`);
      const one = (await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' })).headers.get('PAYMENT-REQUIRED')!;
      // one EVM network adds chat's upto and every route's batch-settlement and auth-capture offers
      assert.ok(one.length < 7.8 * 1024, `PAYMENT-REQUIRED for one network is ${one.length} bytes`);
    });
  }
});

/** extensions other engineers declare beside ours (payment-identifier...): counted, not checked here */
function extraExtensions(required: { extensions?: Record<string, unknown> | null }): string[] {
  return Object.keys(required.extensions ?? {}).filter((key) => key !== 'bazaar' && key !== 'sign-in-with-x');
}
