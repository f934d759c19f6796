// parseRequest, the one reading of an agent surface's body: top-level fields refused or ignored by the surface's
// rules, extra keys inside the body noted and dropped (the client's body left as sent), unknown types named, every
// path in the surface's own syntax; and the notes it leaves, as the headers say them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { parseRequest } from './validate.ts';
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
