// parseRequest, the one reading of an agent surface's body: top-level fields refused or ignored by the surface's
// rules, extra keys inside the body noted and dropped (the client's body left as sent), unknown types named, every
// path in the surface's own syntax; and the notes it leaves, as the headers say them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { parseOrThrow, parseRequest } from './validate.ts';
import { chatRequestSchema, imageRequestSchema, ttsRequestSchema } from './schemas.ts';
import { openaiChatRequestSchema } from './openai/schemas.ts';
import { responsesRequestSchema } from './openai/responses-schemas.ts';
import { messagesRequestSchema } from './anthropic/schemas.ts';
import { RequestNotes } from './request-notes.ts';
import { ApiError } from '../errors.ts';

const text = z.object({ type: z.literal('text'), text: z.string() }).strict();
const image = z.object({ type: z.literal('image'), url: z.string() }).strict();
const schema = z
  .object({
    model: z.string(),
    messages: z.array(z.object({ role: z.string(), content: z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image]))]) }).strict()),
  })
  .strict();
const rules = { refused: { top_k: 'not supported' }, ignored: ['metadata'] };

const refusal = (body: unknown, style: 'dots' | 'brackets') => {
  try {
    parseRequest(schema, body, { style, notes: new RequestNotes(), rules });
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return { field: error.field, message: error.message };
  }
  assert.fail('no refusal');
};

test('extra keys inside the body are dropped and noted, once per kind; the client’s body stays as sent', () => {
  const notes = new RequestNotes();
  const body = {
    model: 'm',
    metadata: { user: 'u' },
    messages: [
      { role: 'user', name: 'a', content: [{ type: 'text', text: 'hi', annotations: [] }] },
      { role: 'assistant', name: 'b', content: [{ type: 'text', text: 'yo', annotations: [] }] },
    ],
  };
  const sent = structuredClone(body);
  const parsed = parseRequest(schema, body, { style: 'brackets', notes, rules });
  assert.deepEqual(parsed.messages[0], { role: 'user', content: [{ type: 'text', text: 'hi' }] });
  assert.deepEqual(body, sent);
  assert.deepEqual(notes.headers(), { 'X-Ignored-Fields': 'metadata, messages[].content[].annotations, messages[].name' });
});

test('a refused field sent with a value is a 400 naming it; sent empty it asks for nothing', () => {
  assert.deepEqual(refusal({ model: 'm', messages: [], top_k: 5 }, 'dots'), { field: 'top_k', message: 'top_k: not supported' });
  const notes = new RequestNotes();
  parseRequest(schema, { model: 'm', messages: [], top_k: null, metadata: {} }, { style: 'dots', notes, rules });
  assert.deepEqual(notes.headers(), {});
});

test('an unknown top-level field is a 400; an unknown type is named with what is taken; paths in each syntax', () => {
  assert.equal(refusal({ model: 'm', messages: [], frobnicate: 1 }, 'dots').field, 'frobnicate');
  const unknownType = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'video', url: 'v' }] }] };
  assert.deepEqual(refusal(unknownType, 'dots'), {
    field: 'messages.0.content.1.type',
    message: 'messages.0.content.1.type: unknown type "video" (this gateway takes text, image)',
  });
  assert.equal(refusal(unknownType, 'brackets').field, 'messages[0].content[1].type');
  // the shape a value came closest to says what is wrong (an array of parts, not a string)
  assert.equal(refusal({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }, 'brackets').field, 'messages[0].content[0].text');
});

test('the notes as headers: field paths kept printable and comma-free, lowered values beside their field', () => {
  const notes = new RequestNotes();
  notes.ignore('tools.3.defer_loading');
  notes.ignore('tools.7.defer_loading');
  notes.ignore('messages.0.content.1.x,y\u00e9');
  notes.clamp('max_tokens', 8192);
  assert.deepEqual(notes.headers(), {
    'X-Ignored-Fields': 'tools.*.defer_loading, messages.*.content.*.x?y?',
    'X-Clamped-Fields': 'max_tokens=8192',
  });
});

test('a body checked on the compiled fast path comes out as the schema’s own parser gives it; a bad one gets the same 400', async () => {
  const tool = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
  const valid: [z.ZodType, unknown][] = [
    [chatRequestSchema, { model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 32 }],
    [chatRequestSchema, { model: 'm', messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true }, options: { seed: 1 } }],
    [imageRequestSchema, { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' }],
    [ttsRequestSchema, { text: 'Hello there', voice: 'en' }],
    [openaiChatRequestSchema, { model: 'm', messages: [{ role: 'user', content: 'Hi' }], temperature: null, tools: [tool], tool_choice: 'auto', response_format: { type: 'json_object' }, max_completion_tokens: 64 }],
    [openaiChatRequestSchema, { model: 'm', messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'sunny' }] }],
    [responsesRequestSchema, { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }], instructions: 'Be brief', stream: true }],
    [messagesRequestSchema, { model: 'm', max_tokens: 256, system: [{ type: 'text', text: 'Be brief', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 1024 } }],
  ];
  // a schema's first use is checked by the schema itself; its compiled form is made right after
  for (const [schema, body] of valid) parseOrThrow(schema, body);
  await new Promise((resolve) => setImmediate(resolve));
  for (const [schema, body] of valid) {
    // every route's schema has a fast path (a construct zod cannot compile would leave it on the slow one, silently)
    assert.doesNotThrow(() => z.compile(schema, { strict: true }));
    assert.deepStrictEqual(parseOrThrow(schema, body), schema.parse(body));
  }
  const refused = (schema: z.ZodType, body: unknown) => assert.throws(() => parseOrThrow(schema, body), (error: unknown) => error instanceof ApiError && error.status === 400);
  refused(chatRequestSchema, { model: 'm' });
  refused(chatRequestSchema, { model: 'm', prompt: 'Hi', extra: 1 });
  refused(imageRequestSchema, { prompt: 'x', size: 'big' });
  refused(openaiChatRequestSchema, { model: 'm', messages: [], n: 2 });
  assert.throws(() => parseOrThrow(chatRequestSchema, { model: 'm', prompt: 'Hi', max_tokens: 0 }), /max_tokens/);
});
