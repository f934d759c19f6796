// A chat prompt the model cannot hold is refused with a 400 before any quote (the audit's case: a prompt past
// the demo model's context was quoted, paid, and failed 502). The bound is per model (maxInputChars), and the
// largest prompt it lets through, in the worst characters for the tokenizer, is really answered.
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
/** a prompt of one message that fills the limit exactly */
const FULL = 'a'.repeat(LIMIT - PROMPT_CHARS_PER_MESSAGE);

let service: RunningService;
let chatUrl: string;
before(async () => {
  service = await startTestService();
  chatUrl = `${service.url}/api/v1/ai/chat`;
});
after(() => service.stop());

async function assertRefused(body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const response = await postJson(chatUrl, body, { 'X-Network': 'base', ...headers });
  assert.equal(response.status, 400);
  assert.equal(response.headers.get('payment-required'), null);
  const error = (await response.json()) as { code: string; field: string; error: string };
  assert.equal(error.code, 'invalid_request');
  assert.equal(error.field, 'prompt');
  assert.match(error.error, new RegExp(`limit of ${LIMIT}`));
}

test('a prompt over the model limit gets 400 instead of a quote, with or without a payment attached', async () => {
  await assertRefused({ model: MODEL, prompt: `${FULL}a` });
  await assertRefused({ model: MODEL, prompt: 'x'.repeat(100_000) });
  await assertRefused({ model: MODEL, prompt: 'x'.repeat(100_000) }, { 'X-PAYMENT': 'eyJ4NDAyVmVyc2lvbiI6MX0=' });
  // each message counts its role markers: many short messages add up too
  const messages = Array.from({ length: Math.ceil(LIMIT / PROMPT_CHARS_PER_MESSAGE) + 1 }, () => ({ role: 'user', content: '' }));
  await assertRefused({ model: MODEL, messages });
});

test('a prompt at the limit is quoted', async () => {
  const response = await postJson(chatUrl, { model: MODEL, prompt: FULL }, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
});

test('the largest prompt let through is answered, even in characters that cost the tokenizer the most', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  // characters are counted in UTF-16 units; the costliest unit is a BMP character outside the demo vocabulary:
  // 3 UTF-8 bytes, so 3 byte-fallback tokens
  const worst = '\u6D77'.repeat(LIMIT - PROMPT_CHARS_PER_MESSAGE);
  const paid = await payEvm(chatUrl, { model: MODEL, prompt: worst, max_tokens: 8 }, buyer);
  assert.equal(paid.model, MODEL);
});
