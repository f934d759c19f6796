// Traces of paid calls, read from a local OTLP/HTTP receiver the test starts (a node:http server decoding the
// JSON export the gateway sends): one span per paid call, with the GenAI semantic conventions (operation, model,
// token usage) and the payment's attributes (scheme, network, amount charged, transaction, verify and settle
// durations, state), for a plain call and a streamed one, whose span ends only when its stream does, and for a
// call paid on a payment channel.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createPublicClient, http } from 'viem';
import { wrapFetchWithPayment } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { postJson, startTestService } from './support/service.ts';
import { decodeReceipt, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_PATH, CHAT_USAGE, startOpenAIUpstream, upstreamChatConfig, type OpenAIUpstream } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { PaymentRequirements } from '../src/x402/types.ts';
import type { RunningService } from '../src/service.ts';

/** One exported span, its attributes decoded from OTLP's JSON (AnyValue) into plain values. */
interface ExportedSpan {
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  status: { code?: number; message?: string };
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

function decodeValue(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(decodeValue);
  return undefined;
}
const decodeAttributes = (attributes: KeyValue[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, decodeValue(value)]));

const spans: ExportedSpan[] = [];
const exportRequests: { contentType: string | undefined }[] = [];
let receiver: Server;
let upstream: OpenAIUpstream;
let service: RunningService;
let buyer: PrivateKeyAccount;

before(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exportRequests.push({ contentType: request.headers['content-type'] });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { resource: { attributes: KeyValue[] }; scopeSpans: { spans: Record<string, unknown>[] }[] }[];
      };
      for (const { resource, scopeSpans } of body.resourceSpans) {
        for (const { spans: exported } of scopeSpans) {
          for (const span of exported) {
            spans.push({
              name: span.name as string,
              kind: span.kind as number,
              startMs: Number(BigInt(span.startTimeUnixNano as string) / 1_000_000n),
              endMs: Number(BigInt(span.endTimeUnixNano as string) / 1_000_000n),
              status: (span.status ?? {}) as ExportedSpan['status'],
              attributes: decodeAttributes(span.attributes as KeyValue[]),
              resource: decodeAttributes(resource.attributes),
            });
          }
        }
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  upstream = await startOpenAIUpstream();
  service = await startTestService({
    config: {
      tracing: { endpoint: `http://127.0.0.1:${port}/v1/traces`, serviceName: 'gateway-under-test', exportDelayMs: 20 },
      ...upstreamChatConfig(upstream.baseURL, { price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } }),
    },
  });
  buyer = await fundedEvmBuyer(service, ['base']);
});
after(async () => {
  await service.stop();
  await upstream.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

async function paid(path: string, body: unknown): Promise<{ requirement: PaymentRequirements; response: Response }> {
  const quote = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts.find((offer) => offer.scheme === 'exact')!;
  const response = await postJson(`${service.url}${path}`, body, { 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453) });
  return { requirement, response };
}

const spanOf = (transaction: string) => spans.find((span) => span.attributes['x402.transaction'] === transaction);

test('a plain paid call is one span: GenAI operation, model and tokens, and what was paid, how and how long it took', async () => {
  const { requirement, response } = await paid('/api/v1/ai/chat', { model: 'up/chat', prompt: 'a haiku' });
  assert.equal(response.status, 200);
  const receipt = decodeReceipt(response.headers.get('x-payment-response'));
  const span = await until('the call\'s span', () => spanOf(receipt.transaction));

  assert.equal(span.name, 'chat up/chat');
  assert.equal(span.kind, 2, 'SERVER');
  assert.equal(span.resource['service.name'], 'gateway-under-test');
  const a = span.attributes;
  assert.equal(a['gen_ai.operation.name'], 'chat');
  assert.equal(a['gen_ai.request.model'], 'up/chat');
  assert.equal(a['gen_ai.response.model'], 'up/chat');
  assert.equal(a['gen_ai.provider.name'], 'up');
  assert.deepEqual(a['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(a['gen_ai.usage.input_tokens'], CHAT_USAGE.prompt_tokens);
  assert.equal(a['gen_ai.usage.output_tokens'], CHAT_USAGE.completion_tokens);
  assert.equal(a['x402.scheme'], 'exact');
  assert.equal(a['x402.network'], 'base');
  assert.equal(a['x402.amount.quoted'], requirement.maxAmountRequired);
  assert.equal(a['x402.amount.charged'], requirement.maxAmountRequired);
  assert.equal(a['x402.amount.charged'], response.headers.get('x-payment-amount'));
  assert.equal(a['x402.payer'], buyer.address);
  assert.equal(a['x402.payment.state'], 'delivered');
  assert.equal(a['x402.verify.outcome'], 'valid');
  assert.equal(a['x402.settle.outcome'], 'settled');
  assert.ok(typeof a['x402.verify.duration_ms'] === 'number' && a['x402.verify.duration_ms'] > 0);
  assert.ok(typeof a['x402.settle.duration_ms'] === 'number' && a['x402.settle.duration_ms'] > 0);
  assert.ok(span.endMs - span.startMs >= Math.floor((a['x402.settle.duration_ms'] as number) + (a['x402.verify.duration_ms'] as number)) - 1);
  assert.equal(a['http.route'], '/api/v1/ai/chat');
  assert.equal(a['http.response.status_code'], 200);
  assert.equal(a['x402.stream'], false);
  assert.notEqual(span.status.code, 2, 'not an error');
  assert.ok(exportRequests.every((r) => r.contentType === 'application/json'), 'OTLP/HTTP with JSON encoding');
  assert.ok(!JSON.stringify(span).includes('haiku'), 'no prompt in the span');
});

test('a streamed paid call\'s span ends when its stream ends, and carries the same attributes', async () => {
  upstream.fail(CHAT_PATH, { kind: 'stream-hold', afterChunks: 3 });
  const body = { model: 'up/chat', messages: [{ role: 'user', content: 'stream it' }], stream: true, stream_options: { include_usage: true } };
  const { requirement, response } = await paid('/v1/chat/completions', body);
  assert.equal(response.status, 200);
  const events = sseData(response);
  await events.next(); // the stream is open, the model held mid-answer
  await until('the upstream to hold the stream', () => upstream.streamsHolding === 1);

  // a plain call's span goes out while the stream is held: the held stream's span is not exported with it
  const plain = await paid('/api/v1/ai/chat', { model: 'up/chat', prompt: 'meanwhile' });
  const plainSpan = await until('the plain call\'s span', () => spanOf(decodeReceipt(plain.response.headers.get('x-payment-response')).transaction));
  assert.ok(plainSpan);
  assert.ok(!spans.some((span) => span.attributes['x402.stream'] === true), 'no span for a stream still running');

  const released = Date.now();
  upstream.release();
  const chunks: { usage?: unknown; x402?: { transaction: string; amount: string } }[] = [];
  for await (const data of events) if (data !== '[DONE]') chunks.push(JSON.parse(data));
  const receipt = chunks.at(-1)!.x402!;
  const span = await until('the stream\'s span', () => spanOf(receipt.transaction));

  assert.ok(span.endMs >= released, 'the span ends after the stream\'s last part was released');
  const a = span.attributes;
  assert.equal(a['x402.stream'], true);
  assert.equal(a['gen_ai.operation.name'], 'chat');
  assert.equal(a['gen_ai.request.model'], 'up/chat');
  assert.equal(a['gen_ai.usage.input_tokens'], CHAT_USAGE.prompt_tokens);
  assert.equal(a['gen_ai.usage.output_tokens'], CHAT_USAGE.completion_tokens);
  assert.equal(a['x402.amount.charged'], receipt.amount);
  assert.equal(a['x402.amount.charged'], requirement.maxAmountRequired);
  assert.equal(a['x402.payment.state'], 'delivered');
  assert.equal(a['x402.settle.outcome'], 'settled');
  assert.ok((a['x402.verify.duration_ms'] as number) > 0 && (a['x402.settle.duration_ms'] as number) > 0);
  assert.equal(a['http.route'], '/v1/chat/completions');
});

test('a refused payment is a span too, marked as an error with its state', async () => {
  const body = { model: 'up/chat', prompt: 'refused' };
  const quote = await postJson(`${service.url}/api/v1/ai/chat`, body, { 'X-Network': 'base' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts.find((offer) => offer.scheme === 'exact')!;
  const underpaid = await signEvmProof(buyer, requirement, 8453, { value: 1n });
  const before = spans.length;
  const response = await postJson(`${service.url}/api/v1/ai/chat`, body, { 'X-PAYMENT': underpaid });
  assert.notEqual(response.status, 200);
  const span = await until('the refused call\'s span', () => spans.slice(before).find((s) => s.attributes['http.response.status_code'] === response.status));
  assert.equal(span.status.code, 2, 'ERROR');
  assert.ok(['payment_required', 'refused'].includes(span.attributes['x402.payment.state'] as string));
  assert.equal(span.attributes['x402.amount.charged'], undefined, 'nothing charged');
});

test('a call paid on a payment channel is a span with its scheme, network, verification and charge, as an exact one is', async () => {
  const channelBuyer = await fundedEvmBuyer(service, ['base']);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(channelBuyer, createPublicClient({ transport: http(service.sandbox!.chains.get('base')!.rpcUrl) })), {
    depositStrategy: () => '100000',
  });
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  const charges: string[] = [];
  const before = spans.length;
  for (const prompt of ['the deposit', 'a voucher']) {
    const response = await pay(`${service.url}/api/v1/ai/chat`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
      body: JSON.stringify({ model: 'up/chat', prompt }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    charges.push(response.headers.get('x-payment-amount')!);
    await response.arrayBuffer();
  }
  const paidSpans = await until('both calls\' spans', () => {
    const found = spans.slice(before).filter((span) => span.attributes['x402.payment.state'] === 'delivered');
    return found.length === 2 ? found : undefined;
  });
  for (const [i, span] of paidSpans.entries()) {
    const a = span.attributes;
    assert.equal(a['x402.scheme'], 'batch-settlement');
    assert.equal(a['x402.network'], 'base');
    assert.equal(a['x402.verify.outcome'], 'valid');
    assert.equal(typeof a['x402.verify.duration_ms'], 'number');
    assert.equal(a['x402.settle.outcome'], 'settled', 'the charge committed');
    assert.equal(typeof a['x402.settle.duration_ms'], 'number');
    assert.equal(a['x402.amount.charged'], charges[i]);
    assert.equal(a['x402.payer'], channelBuyer.address);
  }
  assert.match(String(paidSpans[0]!.attributes['x402.transaction']), /^0x[0-9a-f]{64}$/, 'the deposit\'s transaction');
  assert.equal(paidSpans[1]!.attributes['x402.transaction'], undefined, 'a voucher sends none');
});

test('a paid MCP tool call is one span, with the same GenAI and payment attributes as an HTTP call', async () => {
  const mcp = new Client({ name: 'tracing-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`)));
  try {
    const args = { model: 'up/chat', prompt: 'over MCP', network: 'base' };
    const unpaid = (await mcp.callTool({ name: 'chat', arguments: args })) as CallToolResult;
    const payment = await registerExactEvmScheme(new x402Client(), { signer: buyer }).createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
    const result = (await mcp.callTool({ name: 'chat', arguments: args, _meta: { 'x402/payment': payment } })) as CallToolResult;
    const receipt = result._meta?.['x402/payment-response'] as { transaction: string };
    const span = await until('the tool call\'s span', () => spanOf(receipt.transaction));

    assert.equal(span.name, 'chat up/chat');
    const a = span.attributes;
    assert.equal(a['gen_ai.operation.name'], 'chat');
    assert.equal(a['gen_ai.request.model'], 'up/chat');
    assert.equal(a['gen_ai.usage.output_tokens'], CHAT_USAGE.completion_tokens);
    assert.equal(a['x402.scheme'], 'exact');
    assert.equal(a['x402.network'], 'base');
    assert.equal(a['x402.amount.charged'], payment.accepted.amount);
    assert.equal(a['x402.payer'], buyer.address);
    assert.equal(a['x402.payment.state'], 'delivered');
    assert.equal(a['x402.verify.outcome'], 'valid');
    assert.equal(a['x402.settle.outcome'], 'settled');
    assert.equal(a['http.route'], 'mcp://tool/chat');
    assert.notEqual(span.status.code, 2, 'not an error');
  } finally {
    await mcp.close();
  }
});
