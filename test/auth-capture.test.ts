// x402 `auth-capture`, paid by the unmodified official client (@x402/fetch with only @x402/evm's
// AuthCaptureEvmScheme registered) on the sandbox base chain: Commerce Payments' escrow and its ERC-3009
// collector at their v1.0 addresses, real signatures, the gateway's key as the operator, balances read on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { AuthCaptureEvmScheme } from '@x402/evm/auth-capture/client';
import { toClientEvmSigner } from '@x402/evm';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import { createPublicClient, createTestClient, http, type Hex } from 'viem';
import { privateKeyToAccount, generatePrivateKey, type PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { unusedPort } from './support/ports.ts';
import { balanceOf, fundedEvmBuyer, decodeHeader } from './support/sandbox-wallet.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { configuredRails } from '../src/payments/configured-rails.ts';
import { AUTH_CAPTURE_EIP3009_COLLECTOR, AUTH_CAPTURE_ESCROW } from '../src/x402/auth-capture.ts';
import type { RunningService } from '../src/service.ts';

const IMAGES = '/api/v1/ai/images';
const IMAGE_BODY = { prompt: 'a lighthouse at dusk', size: '256x256' };
/** served by a provider whose upstream port is closed: every generation fails */
const BROKEN_CHAT = '/api/v1/ai/chat';
const BROKEN_CHAT_BODY = { model: 'down/chat', prompt: 'Tell me about the sea', max_tokens: 32 };

let service: RunningService;
before(async () => {
  const port = await unusedPort();
  service = await startTestService({
    networks: ['base', 'solana'],
    config: {
      providers: { down: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeoutMs: 2_000 } },
      models: [
        ...embeddedModels(),
        { id: 'down/chat', provider: 'down', upstreamModel: 'gpt-x', capability: 'chat', maxTokens: 256, defaultMaxTokens: 64, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' } },
      ],
    },
  });
});
after(() => service.stop());

const rpcUrl = () => service.sandbox!.chains.get('base')!.rpcUrl;
const payTo = () => service.rails.get('base')!.payTo;
const spent = async (address: string, before: bigint) => before - (await balanceOf(service, 'base', address));

function authCaptureClient(buyer: PrivateKeyAccount): x402Client {
  const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl()) }));
  return new x402Client().register('eip155:8453', new AuthCaptureEvmScheme(signer));
}

/** @x402/fetch paying with auth-capture only, keeping the PAYMENT-SIGNATURE it sent */
function payingFetch(buyer: PrivateKeyAccount): { fetch: typeof fetch; sent: string[] } {
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    // the retry is a Request @x402/fetch built (not always `instanceof` this realm's Request)
    const signature = new Headers(init?.headers ?? (input as Request).headers).get('PAYMENT-SIGNATURE');
    if (signature) sent.push(signature);
    return fetch(input, init);
  };
  return { fetch: wrapFetchWithPayment(recording, authCaptureClient(buyer)), sent };
}

const post = (pay: typeof fetch, path: string, body: unknown) =>
  pay(`${service.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(body) });

async function quote(path: string, body: unknown, network = 'base') {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': network });
  assert.equal(response.status, 402);
  return { v1: (await response.json()) as { accepts: { scheme: string }[] }, v2: decodeHeader(response.headers.get('PAYMENT-REQUIRED')) };
}

test('the 402 offers auth-capture on EVM beside exact (v2 only), naming the gateway as operator and the v1.0 escrow', async () => {
  const { v1, v2 } = await quote(IMAGES, IMAGE_BODY);
  assert.deepEqual(v1.accepts.map((a) => a.scheme), ['exact'], 'the v1 body is unchanged');
  const schemes = v2.accepts.map((a: { scheme: string }) => a.scheme);
  assert.deepEqual(schemes, ['exact', 'batch-settlement', 'auth-capture']);
  const [exact] = v2.accepts;
  const offer = v2.accepts[2];
  assert.equal(offer.amount, exact.amount);
  assert.equal(offer.payTo, exact.payTo);
  assert.equal(offer.extra.name, exact.extra.name);
  assert.equal(offer.extra.authCaptureEscrow, AUTH_CAPTURE_ESCROW);
  assert.match(offer.extra.captureAuthorizer, /^0x[0-9a-fA-F]{40}$/);
  assert.deepEqual([offer.extra.minFeeBps, offer.extra.maxFeeBps], [0, 0], 'no fee');
  assert.ok(offer.extra.refundDeadline >= offer.extra.captureDeadline && offer.extra.captureDeadline > Date.now() / 1000);
  const solana = (await quote(IMAGES, IMAGE_BODY, 'solana')).v2;
  assert.deepEqual(solana.accepts.map((a: { scheme: string }) => a.scheme), ['exact'], 'Solana stays exact');
});

test('the official client pays an image with auth-capture: charged exactly the price on-chain, once', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const price = BigInt((await quote(IMAGES, IMAGE_BODY)).v2.accepts[0].amount);
  const [buyerBefore, payToBefore] = [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo())];
  const paying = payingFetch(buyer);

  const response = await post(paying.fetch, IMAGES, IMAGE_BODY);
  assert.equal(response.status, 200, await response.clone().text());
  const receipt = decodeHeader(response.headers.get('PAYMENT-RESPONSE'));
  assert.equal(receipt.success, true);
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(receipt.payer.toLowerCase(), buyer.address.toLowerCase());
  const tx = await createPublicClient({ transport: http(rpcUrl()) }).getTransactionReceipt({ hash: receipt.transaction });
  assert.equal(tx.to?.toLowerCase(), AUTH_CAPTURE_ESCROW.toLowerCase(), 'settled through the escrow');
  assert.equal(await spent(buyer.address, buyerBefore), price);
  assert.equal(await balanceOf(service, 'base', payTo()), payToBefore + price);
  assert.equal(await balanceOf(service, 'base', AUTH_CAPTURE_EIP3009_COLLECTOR), 0n, 'nothing left with the collector');

  // the same PAYMENT-SIGNATURE again: the kept result or a refusal, never a second charge
  const [signature] = paying.sent;
  const again = await postJson(`${service.url}${IMAGES}`, IMAGE_BODY, { 'X-Network': 'base', 'PAYMENT-SIGNATURE': signature! });
  assert.equal(again.status, 200, 'the payer gets its kept result again');
  assert.equal(await spent(buyer.address, buyerBefore), price, 'a replay is not charged');
});

test('a streamed chat through the openai SDK is paid with auth-capture before its first byte: the quote, once', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const openai = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'unused', fetch: payingFetch(buyer).fetch, defaultHeaders: { 'X-Network': 'base' }, maxRetries: 0 });
  const stream = await openai.chat.completions.create({ model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Tell me about the sea' }], max_tokens: 16, stream: true });
  let text = '';
  let charged: string | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    charged ??= (chunk as { x402?: { amount: string } }).x402?.amount;
  }
  assert.ok(text.length > 0);
  const spentNow = await spent(buyer.address, before);
  assert.ok(spentNow > 0n, 'charged');
  if (charged !== undefined) assert.equal(spentNow, BigInt(charged), 'exactly what the stream said');
});

test('every surface takes auth-capture: speech (audio), Responses, Anthropic Messages streamed, each charged', async () => {
  const calls: [string, unknown][] = [
    ['/api/v1/ai/tts', { text: 'Hello there' }],
    ['/v1/audio/speech', { model: 'espeak-ng', input: 'Hello there', voice: 'alloy' }],
    ['/v1/responses', { model: 'local/demo-bigram', input: 'Tell me about the sea', max_output_tokens: 16 }],
    ['/v1/messages', { model: 'local/demo-bigram', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Tell me about the sea' }] }],
  ];
  for (const [path, body] of calls) {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const before = await balanceOf(service, 'base', buyer.address);
    const response = await post(payingFetch(buyer).fetch, path, body);
    assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
    await response.arrayBuffer();
    assert.ok((await spent(buyer.address, before)) > 0n, `${path} is charged`);
  }
});

test('an MCP tool call is paid with auth-capture in _meta["x402/payment"]: charged the quote, the receipt in _meta', async () => {
  const mcp = new Client({ name: 'auth-capture-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`)));
  try {
    const args = { prompt: 'a lighthouse at dusk', size: '256x256', network: 'base' };
    const unpaid = (await mcp.callTool({ name: 'generate_image', arguments: args })) as CallToolResult;
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    const offer = required.accepts.find((a) => a.scheme === 'auth-capture');
    assert.ok(offer, JSON.stringify(required.accepts.map((a) => a.scheme)));
    const buyer = await fundedEvmBuyer(service, ['base']);
    const before = await balanceOf(service, 'base', buyer.address);
    const payment = await authCaptureClient(buyer).createPaymentPayload({ ...required, accepts: [offer] });
    const paid = (await mcp.callTool({ name: 'generate_image', arguments: args, _meta: { 'x402/payment': payment } })) as CallToolResult;
    assert.notEqual(paid.isError, true, JSON.stringify(paid).slice(0, 400));
    const receipt = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
    assert.equal(receipt.success, true);
    assert.equal(await spent(buyer.address, before), BigInt(offer.amount));
  } finally {
    await mcp.close();
  }
});

test('work that fails after verification charges nothing', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const response = await post(payingFetch(buyer).fetch, BROKEN_CHAT, BROKEN_CHAT_BODY);
  assert.ok([502, 503, 504].includes(response.status), `status ${response.status}`);
  assert.match(((await response.json()) as { code: string }).code, /^upstream_/, 'the upstream failed, not the payment');
  assert.equal(response.headers.get('PAYMENT-RESPONSE'), null, 'no settlement receipt');
  assert.equal(await spent(buyer.address, before), 0n, 'nothing charged');
});

test('a payment signed for another operator is refused before the chain: 402, nothing charged', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const required = (await quote(IMAGES, IMAGE_BODY)).v2;
  const offer = required.accepts.find((a: { scheme: string }) => a.scheme === 'auth-capture');
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  const payload = await authCaptureClient(buyer).createPaymentPayload({ ...required, accepts: [{ ...offer, extra: { ...offer.extra, captureAuthorizer: stranger } }] });
  const response = await postJson(`${service.url}${IMAGES}`, IMAGE_BODY, { 'X-Network': 'base', 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) });
  assert.equal(response.status, 402);
  assert.match(decodeHeader(response.headers.get('PAYMENT-REQUIRED')).error, /invalid_auth_capture_terms/);
  assert.equal(await spent(buyer.address, before), 0n);
});

test('/readyz probes the escrow: its code gone is degraded, not a 503 (exact still pays)', async () => {
  const report = async () => {
    const response = await fetch(`${service.url}/readyz`);
    assert.equal(response.status, 200);
    return (await response.json()) as { authCapture: Record<string, { status: string; error?: string }>; degraded: string[] };
  };
  const ready = await report();
  assert.deepEqual(Object.keys(ready.authCapture), ['base'], 'only rails offering auth-capture are probed');
  assert.equal(ready.authCapture.base!.status, 'ok');
  assert.deepEqual(ready.degraded, []);

  const code = (await createPublicClient({ transport: http(rpcUrl()) }).getCode({ address: AUTH_CAPTURE_ESCROW })) as Hex;
  const chain = createTestClient({ transport: http(rpcUrl()), mode: 'anvil' });
  await chain.setCode({ address: AUTH_CAPTURE_ESCROW, bytecode: '0x' });
  try {
    const degraded = await report();
    assert.equal(degraded.authCapture.base!.status, 'down');
    assert.match(degraded.authCapture.base!.error!, /the auth-capture escrow/);
    assert.deepEqual(degraded.degraded, ['auth-capture:base']);
  } finally {
    await chain.setCode({ address: AUTH_CAPTURE_ESCROW, bytecode: code });
  }
});

test('authCapture "on" where it cannot be honoured stops startup, each network named in the one message', async () => {
  const chain = service.sandbox!.chains.get('base')!;
  const config = loadConfig(
    {},
    {
      networks: {
        // a remote facilitator cannot charge the escrow for us: the operator is our key
        base: { payTo: chain.payTo, facilitator: { type: 'remote', url: 'http://127.0.0.1:9/' }, authCapture: 'on' },
        // a chain whose escrow cannot be found (this RPC answers no EVM call): nothing to charge through
        polygon: { payTo: chain.payTo, facilitator: { type: 'local', rpcUrl: `${service.url}/no-such-rpc`, secretKeyEnv: 'AUTH_CAPTURE_TEST_KEY' }, authCapture: 'on' },
      },
    },
  );
  await assert.rejects(configuredRails(config, { AUTH_CAPTURE_TEST_KEY: `0x${'11'.repeat(32)}` }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /networks\.base: authCapture is "on" but it needs a local facilitator/);
    assert.match(error.message, /networks\.polygon: authCapture is "on" but the chain could not be asked for its code/);
    return true;
  });
  assert.throws(
    () => loadConfig({}, { networks: { solana: { payTo: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', facilitator: { type: 'local', rpcUrl: rpcUrl(), secretKeyEnv: 'K' }, authCapture: 'on' } } }),
    /networks\.solana\.authCapture "on": auth-capture is offered on EVM networks only/,
  );
});
