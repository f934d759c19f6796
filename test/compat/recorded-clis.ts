// Claude Code and Codex as they really talk: the requests the pinned CLIs sent in one recorded tool loop
// (fixtures/agents/, scripts/capture-agent-requests.ts) sent again through a paying fetch, each turn whole and
// streamed: answered 200, the stream ending with its receipt, each charged once.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sseData } from '../support/sse.ts';
import type { CompatCase, Surface } from './case.ts';
import type { ModelKind } from './gateway.ts';

interface Fixture {
  client: 'claude-code' | 'codex';
  version: string;
  model: string;
  requests: Array<{ path: Surface; headers: Record<string, string>; body: Record<string, unknown> }>;
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'agents');
const NAMES = { 'claude-code': 'Claude Code', codex: 'Codex CLI' } as const;
/** each recording is sent to every kind of model */
const MODELS: ModelKind[] = ['sandbox', 'openai', 'anthropic'];

/** what a later turn carries back besides the tool's result */
function carries(body: Record<string, unknown>): string {
  const text = JSON.stringify(body);
  const what = ['a tool result'];
  if (text.includes('"type":"thinking"')) what.push('a signed thinking block');
  if (text.includes('"type":"reasoning"')) what.push('a reasoning item');
  if (text.includes('"type":"custom_tool_call"')) what.push('a freeform tool call');
  return what.join(', ');
}

export const recordedCliCases: CompatCase[] = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .flatMap((name) => {
    const fixture = JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Fixture;
    return fixture.requests.flatMap((request, turn) =>
      MODELS.map((model): CompatCase => ({
        client: `${NAMES[fixture.client]} ${fixture.version}`,
        surface: request.path,
        feature: `as model \`${fixture.model}\`: ${turn === 0 ? 'its first request' : `turn ${turn + 1}, with ${carries(request.body)}`}, whole and streamed`,
        model,
        async run(gateway) {
          const buyer = await gateway.buyer();
          for (const stream of [false, true]) {
            const response = await buyer.fetch(`${gateway.url}${request.path}`, {
              method: 'POST',
              headers: { ...request.headers, 'content-type': 'application/json', 'x-network': 'base' },
              body: JSON.stringify({ ...request.body, model: gateway.models[model], stream }),
            });
            assert.equal(response.status, 200, await response.clone().text());
            if (!stream) {
              await response.json();
              continue;
            }
            const events = [];
            for await (const data of sseData(response)) events.push(data === '[DONE]' ? {} : (JSON.parse(data) as Record<string, any>));
            assert.ok(!events.some((event) => event.type === 'error'), JSON.stringify(events.at(-1)));
            assert.equal(events.findLast((event) => event.x402)?.x402.network, 'eip155:8453', 'the receipt last, its network as PAYMENT-RESPONSE spells it');
          }
          await buyer.assertCharged(2);
        },
      })),
    );
  });
