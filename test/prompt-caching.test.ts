// Prompt caching survives the gateway's translation: what Claude Code really sends (test/fixtures/agents/) reaches an
// Anthropic-protocol upstream with its system blocks as sent and every cache_control mark where the client put
// it; Codex's prompt_cache_key reaches an OpenAI-protocol upstream; the cache reads an upstream reports come back
// in each surface's usage and, under `upto`, are charged at the model's cachedInputPercent. Local servers speak
// each vendor's protocol (agent-upstreams.ts); payments are real, on the sandbox chain.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { postJson } from './support/service.ts';
import { balanceOf, exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { REPORTED, type AgentUpstream } from './support/agent-upstreams.ts';
import { startAgentGateway, UP_ANTHROPIC, UP_OPENAI, type AgentGateway } from './support/agent-gateway.ts';
import type { RunningService } from '../src/service.ts';

const FUNDS = 20_000_000n;
const PRICE = { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' };

const fixture = (name: string) =>
  (JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'agents', `${name}.json`), 'utf8')) as { requests: Array<{ path: string; headers: Record<string, string>; body: Record<string, any> }> })
    .requests;

let gateway: AgentGateway;
let openaiUp: AgentUpstream;
let anthropicUp: AgentUpstream;
let service: RunningService;

before(async () => {
  gateway = await startAgentGateway({ model: { maxTokens: 256, defaultMaxTokens: 64, cachedInputPercent: 10, price: PRICE } });
  ({ service, openaiUp, anthropicUp } = gateway);
});
after(() => gateway?.stop());

async function paid(buyer: PrivateKeyAccount, path: string, body: Record<string, unknown>, pay = exactPayingFetch(buyer)): Promise<Response> {
  const response = await pay(`${service.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-network': 'base' }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, await response.clone().text());
  return response;
}

/** every cache_control mark of an Anthropic body, with what it is on: the block's text, a result's call id, a tool's name */
function cacheMarks(body: Record<string, any>): Array<[string, string, unknown]> {
  const marks: Array<[string, string, unknown]> = [];
  const on = (where: string, block: Record<string, any>) => {
    if (block.cache_control) marks.push([where, String(block.text ?? block.tool_use_id ?? block.id ?? block.name), block.cache_control]);
  };
  if (Array.isArray(body.system)) for (const block of body.system) on('system', block);
  for (const message of body.messages) if (Array.isArray(message.content)) for (const block of message.content) on(`${message.role} turn`, block);
  for (const tool of body.tools ?? []) on('tool', tool);
  return marks;
}

describe('to an Anthropic-protocol upstream', () => {
  for (const name of ['claude-code-claude-sonnet-4-5', 'claude-code-local_demo-bigram']) {
    test(`${name}: the system blocks as sent, and every cache_control where Claude Code put it`, async () => {
      const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
      for (const request of fixture(name)) {
        for (const stream of [false, true]) {
          const response = await paid(buyer, request.path, { ...request.body, model: UP_ANTHROPIC, stream });
          await response.arrayBuffer();
          const sent = anthropicUp.received.at(-1)!;
          assert.deepEqual(sent.system, request.body.system, 'system blocks unchanged');
          const marks = cacheMarks(request.body);
          assert.ok(marks.length >= 2, 'the fixture carries marks');
          assert.deepEqual(cacheMarks(sent), marks);
          assert.doesNotMatch(response.headers.get('x-ignored-fields') ?? '', /cache_control/, 'not ignored: they reached the upstream');
        }
      }
    });
  }

  test('to any other model the marks are accepted and named as ignored', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    const [request] = fixture('claude-code-local_demo-bigram');
    const response = await paid(buyer, request!.path, { ...request!.body, model: UP_OPENAI, stream: false });
    assert.match(response.headers.get('x-ignored-fields')!, /system\.\*\.cache_control/);
  });
});

describe('to an OpenAI-protocol upstream', () => {
  test('Codex’s prompt_cache_key arrives as sent (Responses), and so does one on Chat Completions', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
    for (const request of fixture('codex-gpt-5.5')) {
      await (await paid(buyer, request.path, { ...request.body, model: UP_OPENAI, stream: false })).arrayBuffer();
      assert.equal(openaiUp.received.at(-1)!.prompt_cache_key, request.body.prompt_cache_key);
    }
    await (await paid(buyer, '/v1/chat/completions', { model: UP_OPENAI, messages: [{ role: 'user', content: 'hi' }], prompt_cache_key: 'agent-7' })).arrayBuffer();
    assert.equal(openaiUp.received.at(-1)!.prompt_cache_key, 'agent-7');
  });
});

describe('cache reads reported on every surface, and charged at cachedInputPercent under upto', () => {
  function uptoFetch(buyer: PrivateKeyAccount): typeof fetch {
    const rpcUrl = service.sandbox!.chains.get('base')!.rpcUrl;
    const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl) }));
    return wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', new UptoEvmScheme(signer, { rpcUrl })));
  }
  const question = 'What is the weather in Oslo?';
  const surfaces = [
    { path: '/v1/messages', body: { max_tokens: 200, messages: [{ role: 'user', content: question }] }, cached: (body: any) => body.usage.cache_read_input_tokens },
    { path: '/v1/responses', body: { max_output_tokens: 200, input: question }, cached: (body: any) => body.usage.input_tokens_details.cached_tokens },
    { path: '/v1/chat/completions', body: { max_tokens: 200, messages: [{ role: 'user', content: question }] }, cached: (body: any) => body.usage.prompt_tokens_details.cached_tokens },
  ];
  for (const { path, body, cached } of surfaces) {
    for (const model of [UP_OPENAI, UP_ANTHROPIC]) {
      test(`${path} on ${model}`, async () => {
        const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
        const quote = await postJson(`${service.url}${path}`, { ...body, model }, { 'X-Network': 'base' });
        const ceiling = BigInt(((await quote.json()) as { accepts: Array<{ maxAmountRequired: string }> }).accepts[0]!.maxAmountRequired);
        const response = await paid(buyer, path, { ...body, model }, uptoFetch(buyer));
        assert.equal(cached(await response.json()), REPORTED.cachedInputTokens);
        // the quote: 1000 per request + 200 tokens at 2 each + the prompt's characters; the charge: the prompt with
        // its cached share at 10%, and the tokens the upstream reports
        const promptPrice = ceiling - 1000n - 400n;
        const total = BigInt(REPORTED.inputTokens);
        const discounted = (promptPrice * (total * 100n - BigInt(REPORTED.cachedInputTokens) * 90n) + total * 100n - 1n) / (total * 100n);
        const charged = BigInt(response.headers.get('x-payment-amount')!);
        assert.equal(charged, 1000n + BigInt(REPORTED.outputTokens * 2) + discounted);
        assert.equal(FUNDS - (await balanceOf(service, 'base', buyer.address)), charged);
      });
    }
  }
});
