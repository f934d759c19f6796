// What Claude Code and Codex really send (test/fixtures/agents/, recorded from the pinned CLIs by
// scripts/capture-agent-requests.ts), sent again to a sandbox gateway through a paying fetch: each CLI's first
// request and its later turns (a tool call and its result, thinking blocks and reasoning items, a freeform tool
// call), streamed and not, on each kind of model: the embedded sandbox model, an OpenAI-protocol upstream and an
// Anthropic-protocol upstream (local servers speaking each vendor's protocol). Every one is answered 200 and
// charged once, on-chain, what its receipt says; what the gateway did not use is named in X-Ignored-Fields.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService } from './support/service.ts';
import { balanceOf, decodeReceipt, exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { startAnthropicAgentUpstream, startOpenAIAgentUpstream, type AgentUpstream } from './support/agent-upstreams.ts';
import { sseData } from './support/sse.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import type { RunningService } from '../src/service.ts';

interface Fixture {
  client: 'claude-code' | 'codex';
  version: string;
  model: string;
  requests: Array<{ path: string; headers: Record<string, string>; body: Record<string, unknown> }>;
}

const FIXTURES = join(import.meta.dirname, 'fixtures', 'agents');
const fixtures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name: name.replace(/\.json$/, ''), ...(JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Fixture) }));

const UP_OPENAI = 'up/openai';
const UP_ANTHROPIC = 'up/anthropic';
/** each kind of model a CLI may be pointed at */
const MODELS = [UP_OPENAI, UP_ANTHROPIC];
const FUNDS = 20_000_000n;

let openaiUp: AgentUpstream;
let anthropicUp: AgentUpstream;
let service: RunningService;
let buyer: PrivateKeyAccount;

before(async () => {
  [openaiUp, anthropicUp] = await Promise.all([startOpenAIAgentUpstream(), startAnthropicAgentUpstream()]);
  const upstreamModel = (id: string, provider: string, upstream: string) => ({
    id,
    provider,
    upstreamModel: upstream,
    capability: 'chat' as const,
    maxTokens: 8192,
    defaultMaxTokens: 1024,
    supports: { vision: true, reasoning: true },
    cachedInputPercent: 10,
    price: { perRequest: '1000', perThousandOutputTokens: '200', perThousandInputChars: '10' },
  });
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: {
        oa: { type: 'openai-compatible', baseURL: openaiUp.baseURL, timeoutMs: 30_000, maxRetries: 0 },
        an: { type: 'anthropic', baseURL: anthropicUp.baseURL, timeoutMs: 30_000, maxRetries: 0 },
      },
      models: [...embeddedModels(), upstreamModel(UP_OPENAI, 'oa', 'gpt-test'), upstreamModel(UP_ANTHROPIC, 'an', 'claude-sonnet-4-5')],
    },
  });
  buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
});
after(async () => {
  await service?.stop();
  await openaiUp?.close();
  await anthropicUp?.close();
});

/**
 * One recorded request sent again, paid: the body as the CLI sent it, `model` and `stream` set. Returns the
 * answer's headers and its body (the JSON, or the stream's events), once the charge is checked on-chain.
 */
async function replay(request: Fixture['requests'][number], model: string, stream: boolean) {
  const before = await balanceOf(service, 'base', buyer.address);
  const response = await exactPayingFetch(buyer)(`${service.url}${request.path}`, {
    method: 'POST',
    headers: { ...request.headers, 'content-type': 'application/json', 'x-network': 'base' },
    body: JSON.stringify({ ...request.body, model, stream }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const charged = BigInt(response.headers.get('x-payment-amount')!);
  const events: Record<string, any>[] = [];
  let json: Record<string, any> | undefined;
  if (stream) for await (const data of sseData(response)) events.push(data === '[DONE]' ? {} : JSON.parse(data));
  else json = (await response.json()) as Record<string, any>;
  assert.ok(charged > 0n);
  assert.equal(await balanceOf(service, 'base', buyer.address), before - charged, 'charged once, what the answer says');
  return { headers: response.headers, events, json };
}

for (const fixture of fixtures) {
  describe(`${fixture.name} (${fixture.client} ${fixture.version}, as model ${fixture.model})`, () => {
    fixture.requests.forEach((request, turn) => {
      for (const model of MODELS) {
        for (const stream of [false, true]) {
          test(`turn ${turn + 1} on ${model}, ${stream ? 'streamed' : 'whole'}: 200, charged once`, async () => {
            const { headers, events, json } = await replay(request, model, stream);
            if (stream) {
              const last = events.findLast((event) => event.x402);
              assert.ok(last, 'the receipt in the last event');
              // paid on x402 v2 (@x402/fetch 2.x): spelled as its PAYMENT-RESPONSE header spells it
              assert.equal(last.x402.network, 'eip155:8453');
              assert.ok(!events.some((event) => event.type === 'error'), JSON.stringify(events.find((event) => event.type === 'error')));
            } else {
              assert.ok(json!.content ?? json!.output, 'a message or a response');
              assert.equal(decodeReceipt(headers.get('payment-response')).network, 'eip155:8453');
            }
            // what the CLIs send that changes nothing here is said, never refused
            const ignored = headers.get('x-ignored-fields') ?? '';
            if (fixture.client === 'claude-code') assert.match(ignored, /metadata/);
            if (fixture.client === 'codex') assert.match(ignored, /client_metadata/);
          });
        }
      }
    });
  });
}
