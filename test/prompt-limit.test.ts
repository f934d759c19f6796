// A chat prompt is refused with a 400 before any quote when it is over the model's limit (maxInputChars), never
// quoted, paid and failed. The sandbox model takes a coding agent's prompt (Claude Code's first request is 50-90 KB,
// a session grows past 256 KB): what its context cannot hold is cut from the start, so a call's cost stays
// bounded, and the largest prompt it takes, in the characters that cost its tokenizer the most, is answered.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, startTestService } from './support/service.ts';
import { fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { payEvm } from './support/paid-call.ts';
import { DEMO_CHAT_MODEL } from '../src/config/engines.ts';
import { PROMPT_CHARS_PER_MESSAGE } from '../src/api/chat.ts';
import type { RunningService } from '../src/service.ts';

const MODEL = DEMO_CHAT_MODEL.id;
const LIMIT = DEMO_CHAT_MODEL.maxInputChars;
/** the surfaces take at most 100,000 characters per text: a long prompt comes as several messages */
const PER_MESSAGE = 100_000;

/** user messages of `char` filling exactly `chars` of the limit (each message's 16 characters of markers included) */
function filling(chars: number, char = 'a'): Array<{ role: 'user'; content: string }> {
  const messages = [];
  for (let left = chars; left > 0; ) {
    const text = Math.min(PER_MESSAGE, left - PROMPT_CHARS_PER_MESSAGE);
    messages.push({ role: 'user' as const, content: char.repeat(text) });
    left -= text + PROMPT_CHARS_PER_MESSAGE;
  }
  return messages;
}

let service: RunningService;
let chatUrl: string;
before(async () => {
  // room for the largest prompt in 3-byte characters
  service = await startTestService({ config: { bodyLimitBytes: 4 * LIMIT } });
  chatUrl = `${service.url}/api/v1/ai/chat`;
});
after(() => service.stop());

async function assertRefused(body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const response = await postJson(chatUrl, body, { 'X-Network': 'base', ...headers });
  assert.equal(response.status, 400);
  assert.equal(response.headers.get('payment-required'), null);
  const error = (await response.json()) as { code: string; field: string; error: string };
  assert.equal(error.code, 'context_length_exceeded');
  assert.equal(error.field, 'prompt');
  assert.match(error.error, new RegExp(`^the prompt is too long: \\d+ characters .* > ${LIMIT}, the maximum context length of model`));
}

test('a prompt over the model limit gets 400 instead of a quote, with or without a payment attached', async () => {
  const over = [...filling(LIMIT), { role: 'user', content: 'a' }];
  await assertRefused({ model: MODEL, messages: over });
  await assertRefused({ model: MODEL, messages: over }, { 'X-PAYMENT': 'eyJ4NDAyVmVyc2lvbiI6MX0=' });
});

test('a prompt at the limit is quoted', async () => {
  const response = await postJson(chatUrl, { model: MODEL, messages: filling(LIMIT) }, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
});

test("a coding agent's 256,000-character prompt is answered, its last tokens in the context, at a bounded cost", async (t) => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const system = 'You are an interactive agent that helps users with software engineering tasks. '.repeat(200);
  const file = 'export function add(a: number, b: number): number { return a + b; }\n'.repeat(1_300);
  const reads = [1, 2, 3].map((n) => ({ role: 'user', content: `Read file ${n}:\n${file}` }));
  const body = { model: MODEL, messages: [{ role: 'system', content: system }, ...reads, { role: 'user', content: 'What do they do?' }], max_tokens: 32 };
  const chars = body.messages.reduce((sum, message) => sum + message.content.length, 0);
  assert.ok(chars >= 256_000, `${chars}`);
  const cpuMs = async (call: unknown) => {
    const before = process.cpuUsage();
    assert.equal((await payEvm(chatUrl, call, buyer)).model, MODEL);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  };
  await cpuMs({ model: MODEL, prompt: 'warm up: the model loads once', max_tokens: 32 });
  const short = await cpuMs({ model: MODEL, prompt: 'What does add do?', max_tokens: 32 });
  const long = await cpuMs(body);
  t.diagnostic(`CPU of this process per quoted and paid call: ${long.toFixed(0)} ms for ${chars} characters, ${short.toFixed(0)} ms for 17`);
});

test('the largest prompt let through is answered, even in characters that cost the tokenizer the most', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  // characters are counted in UTF-16 units; the costliest unit is a BMP character outside the demo vocabulary:
  // 3 UTF-8 bytes, so 3 byte-fallback tokens
  const paid = await payEvm(chatUrl, { model: MODEL, messages: filling(LIMIT, '\u6D77'), max_tokens: 8 }, buyer);
  assert.equal(paid.model, MODEL);
});
