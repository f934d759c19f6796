// Streams honour backpressure on every surface (the spec chat stream, /v1/chat/completions, /v1/responses,
// /v1/messages): a client that reads nothing makes the gateway stop reading the model, so an unread stream of many
// megabytes costs the gateway a bounded window, not the whole answer (audits saw +86 MB, then +49 MB with the whole
// upstream answer read in 2.2 s, for one unread stream of a few megabytes). And an upstream that streams past the
// max_tokens it was given is cut there, the stream finishing with `length`. The gateway runs as a child process, so
// its resident memory is its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_PATH, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const MB = 1024 * 1024;
/** the unread stream: 2,400 events of 10,000 characters, about 24 MB of server-sent events from the upstream */
const FLOOD = { events: 2_400, text: 'x'.repeat(9_999) + ' ' };
/** a ceiling the flood never reaches, so only backpressure can hold it back */
const MAX_TOKENS = 1_000_000;
const MESSAGES = [{ role: 'user', content: 'flood' }];
/** each surface's streamed call for all the tokens the model allows */
const SURFACES = [
  { path: '/api/v1/ai/chat', body: { model: 'up/chat', prompt: 'flood', stream: true, max_tokens: MAX_TOKENS } },
  { path: '/v1/chat/completions', body: { model: 'up/chat', messages: MESSAGES, stream: true, max_tokens: MAX_TOKENS } },
  { path: '/v1/responses', body: { model: 'up/chat', input: 'flood', stream: true, max_output_tokens: MAX_TOKENS } },
  { path: '/v1/messages', body: { model: 'up/chat', messages: MESSAGES, stream: true, max_tokens: MAX_TOKENS } },
].map((surface) => ({ ...surface, as: 'content' as const }));
/** a tool call's arguments streamed by the megabyte, on each surface that carries tool calls */
const TOOL = { type: 'function', function: { name: 'flood', parameters: { type: 'object' } } };
const TOOL_SURFACES = [
  { path: '/v1/chat/completions', body: { ...SURFACES[1]!.body, tools: [TOOL] }, as: 'tool-arguments' as const },
  { path: '/v1/responses', body: { ...SURFACES[2]!.body, tools: [{ type: 'function', name: 'flood', parameters: { type: 'object' } }] }, as: 'tool-arguments' as const },
  { path: '/v1/messages', body: { ...SURFACES[3]!.body, tools: [{ name: 'flood', input_schema: { type: 'object' } }] }, as: 'tool-arguments' as const },
];
let upstream: OpenAIUpstream;
let gateway: ChildService;
let buyer: PrivateKeyAccount;

before(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startChildService(
    {
    logLevel: 'warn',
    sandbox: { enabled: true, networks: ['base'] },
    providers: { up: { type: 'openai-compatible', baseURL: upstream.baseURL, maxRetries: 0, timeoutMs: 120_000 } },
    models: [
      {
        id: 'up/chat',
        provider: 'up',
        upstreamModel: 'm',
        capability: 'chat',
        maxTokens: MAX_TOKENS,
        defaultMaxTokens: 16,
        price: { perRequest: '1000', perThousandOutputTokens: '1', perThousandInputChars: '0' },
      },
    ],
    // a young generation of 1 MB: the resident memory then grows with what the gateway keeps, not with garbage
    // that a larger one lets pile up before its next scavenge
  }, { NODE_OPTIONS: '--max-semi-space-size=1' });
  buyer = privateKeyToAccount(generatePrivateKey());
  const funded = await postJson(`${gateway.url}/sandbox/faucet`, { network: 'base', address: buyer.address });
  assert.equal(funded.status, 200);
});
after(async () => {
  await gateway.stop();
  await upstream.close();
});

/** The gateway's resident set size, from the kernel. */
function gatewayRss(): number {
  const status = readFileSync(`/proc/${gateway.process.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

async function paidHeaders(path: string, body: unknown): Promise<Record<string, string>> {
  const quote = await postJson(`${gateway.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  return { 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453) };
}

for (const { path, body, as } of [...SURFACES, ...TOOL_SURFACES]) {
  test(`an unread stream of many megabytes (${as}) on ${path} keeps the gateway's memory bounded: the model is paused, not buffered`, async () => {
    // a first streamed call warms the paths up, so the baseline is a gateway that has served one
    upstream.reset();
    const warm = Object.fromEntries(Object.entries(body).map(([name, value]) => [name, value === MAX_TOKENS ? 16 : value]));
    const warmed = await postJson(`${gateway.url}${path}`, warm, await paidHeaders(path, warm));
    for await (const _ of sseData(warmed));
    const baseline = gatewayRss();

    const request = JSON.stringify(body);
    const headers = await paidHeaders(path, body);
    upstream.reset();
    upstream.fail(CHAT_PATH, { kind: 'stream-flood', ...FLOOD, as });
    const { port } = new URL(gateway.url);
    const client: Socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    client.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-PAYMENT: ${headers['X-PAYMENT']}\r\n` +
        `Content-Length: ${Buffer.byteLength(request)}\r\n\r\n${request}`,
    );
    client.pause(); // and reads nothing

    // the upstream waits on the gateway ('drain') and keeps waiting, not a byte further, while the gateway answers
    // other requests in between: it is idle, and has stopped reading the model
    let steady = 0;
    await until('the upstream to be held back, or to finish', async () => {
      if (upstream.flood.finished) return true;
      const { bytes, waiting } = upstream.flood;
      await fetch(`${gateway.url}/healthz`);
      steady = waiting && upstream.flood.waiting && upstream.flood.bytes === bytes ? steady + 1 : 0;
      return steady >= 20;
    });
    const grown = gatewayRss() - baseline;
    console.log(`${path} (${as}): read from the upstream ${(upstream.flood.bytes / MB).toFixed(1)} MB; gateway RSS grew ${(grown / MB).toFixed(1)} MB`);
    const total = FLOOD.events * (FLOOD.text.length + 150);
    assert.ok(!upstream.flood.finished, `the whole ${(total / MB).toFixed(0)} MB stream went out with nobody reading it`);
    assert.ok(upstream.flood.bytes < total / 2, `${(upstream.flood.bytes / MB).toFixed(1)} MB read from the upstream while the client read nothing`);
    assert.ok(grown < 32 * MB, `the gateway grew by ${(grown / MB).toFixed(1)} MB`);
    client.destroy();
    await until('the gateway to close the upstream stream', () => upstream.streamsClosedEarly === 1);
  });
}

test('an upstream that streams past max_tokens is cut at max_tokens and the stream finishes with length', async () => {
  upstream.reset();
  const body = { model: 'up/chat', messages: [{ role: 'user', content: 'count' }], stream: true, max_tokens: 8 };
  upstream.fail(CHAT_PATH, { kind: 'stream-flood', events: 5_000, text: 'word ' });
  const response = await postJson(`${gateway.url}/v1/chat/completions`, body, await paidHeaders('/v1/chat/completions', body));
  assert.equal(response.status, 200);
  const chunks: { choices: { delta: { content?: string }; finish_reason: string | null }[]; x402?: { amount: string } }[] = [];
  for await (const data of sseData(response)) if (data !== '[DONE]') chunks.push(JSON.parse(data));
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'word '.repeat(8));
  assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'length');
  assert.ok(chunks.at(-1)!.x402, 'paid: the receipt closes the stream');
  await until('the gateway to close the upstream stream', () => upstream.streamsClosedEarly === 1);
  assert.ok(!upstream.flood.finished);
});

test('one event holding far more text than max_tokens can is cut too (64 characters a token)', async () => {
  upstream.reset();
  const body = { model: 'up/chat', messages: [{ role: 'user', content: 'one' }], stream: true, max_tokens: 4 };
  upstream.fail(CHAT_PATH, { kind: 'stream-flood', events: 3, text: 'y'.repeat(100_000) });
  const response = await postJson(`${gateway.url}/v1/chat/completions`, body, await paidHeaders('/v1/chat/completions', body));
  const chunks: { choices: { delta: { content?: string }; finish_reason: string | null }[] }[] = [];
  for await (const data of sseData(response)) if (data !== '[DONE]') chunks.push(JSON.parse(data));
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  assert.equal(text.length, 4 * 64);
  assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'length');
});
