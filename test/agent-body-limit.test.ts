// A coding agent sends its whole session each turn: the chat surfaces take bodies up to 32 MiB (Anthropic's own
// limit; chatBodyLimitBytes), and answer 413 in the surface's shape past it. A long Claude Code session (its
// recorded first request, then file reads; 6 MB here to keep the test fast, bench/agent-body.ts sends 32 MB) is
// paid and answered through an Anthropic-protocol upstream; a large body that is not JSON, or holds a __proto__
// key, is a 400 as a small one is.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { postJson } from './support/service.ts';
import { exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { startAgentGateway, UP_ANTHROPIC, type AgentGateway } from './support/agent-gateway.ts';
import type { RunningService } from '../src/service.ts';

const LIMIT = 32 * 1024 * 1024;
const MODEL = UP_ANTHROPIC;

let gateway: AgentGateway;
let service: RunningService;
before(async () => {
  gateway = await startAgentGateway({ model: { maxTokens: 8192, defaultMaxTokens: 1024, price: { perRequest: '1000', perThousandOutputTokens: '200', perThousandInputChars: '1' } } });
  ({ service } = gateway);
});
after(() => gateway?.stop());

/** Claude Code's recorded first request, then Read calls of 64 KB files, to about `bytes` */
function session(bytes: number): string {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'agents', 'claude-code-local_demo-bigram.json'), 'utf8')) as { requests: Array<{ body: Record<string, any> }> };
  const body: Record<string, any> = { ...fixture.requests[0]!.body, model: MODEL, stream: false };
  const file = 'const answer = 42; // a line of the file read\n'.repeat(1400).slice(0, 64 * 1024);
  const messages = [...body.messages];
  let size = JSON.stringify(body).length;
  for (let turn = 0; size + 2 * file.length < bytes; turn++) {
    const call = { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${turn}`, name: 'Read', input: { file_path: `/src/file${turn}.ts` } }] };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: file }] };
    messages.push(call, result);
    size += JSON.stringify(call).length + JSON.stringify(result).length + 2;
  }
  return JSON.stringify({ ...body, messages });
}

test('a 6 MB Claude Code session is paid and answered; every message reaches the model', async () => {
  const body = session(6 * 1024 * 1024);
  assert.ok(body.length > 5 * 1024 * 1024);
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const response = await exactPayingFetch(buyer)(`${service.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-network': 'base' }, body });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(((await response.json()) as { type: string }).type, 'message');
  assert.equal(gateway.anthropicUp.received.at(-1)!.messages.length, (JSON.parse(body) as { messages: unknown[] }).messages.length);
});

test('past 32 MiB: 413 in Anthropic’s shape, nothing read further', async () => {
  const response = await postJson(`${service.url}/v1/messages`, `{"model":"${MODEL}","padding":"${'x'.repeat(LIMIT)}"}`);
  assert.equal(response.status, 413);
  assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'request_too_large');
});

test('a large body that is not JSON, or holds a __proto__ key, is a 400 as a small one is', async () => {
  const large = 'x'.repeat(2 * 1024 * 1024);
  const broken = await postJson(`${service.url}/v1/chat/completions`, `{"model":"${MODEL}","messages":[{"role":"user","content":"${large}"}`);
  assert.equal(broken.status, 400);
  assert.match(((await broken.json()) as { error: { message: string } }).error.message, /not valid JSON/);
  const polluted = await postJson(`${service.url}/v1/chat/completions`, `{"model":"${MODEL}","messages":[{"role":"user","content":"${large}"}],"__proto__":{"admin":true}}`);
  assert.equal(polluted.status, 400);
  assert.equal(((await polluted.json()) as { error: { param: string } }).error.param, '__proto__');
});
