// An agent at its defaults names its vendor's model: the proxy sends the gateway's chat model in its place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestModel, withGatewayModel } from './chat-models.ts';

const models = { known: new Set(['local/demo-bigram', 'up/chat']), fallback: 'local/demo-bigram' };
const body = (value: unknown) => Buffer.from(JSON.stringify(value));

test('a model the gateway sells passes as it is, the same bytes', () => {
  const sent = body({ model: 'up/chat', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(withGatewayModel(sent, models).body, sent);
});

test("Claude Code's default model is sent as the gateway's chat model, and said so", () => {
  const { body: sent, substituted } = withGatewayModel(body({ model: 'claude-opus-5-5', max_tokens: 32000, stream: true }), models);
  assert.deepEqual(JSON.parse(sent.toString()), { model: 'local/demo-bigram', max_tokens: 32000, stream: true });
  assert.equal(substituted, 'claude-opus-5-5 -> local/demo-bigram');
});

test('a nested "model" before the top-level one does not hide an unknown top-level model', () => {
  const { body: sent } = withGatewayModel(body({ metadata: { model: 'up/chat' }, model: 'gpt-5.5' }), models);
  assert.equal(JSON.parse(sent.toString()).model, 'local/demo-bigram');
});

test('without a fallback, or with a body that is no JSON object, nothing changes', () => {
  const unknown = body({ model: 'gpt-5.5' });
  assert.equal(withGatewayModel(unknown, { ...models, fallback: undefined }).body, unknown);
  const junk = Buffer.from('{not json');
  assert.equal(withGatewayModel(junk, models).body, junk);
});

test('the model an account line names: read from the head of the body, or from the whole body when it is not first', () => {
  assert.equal(requestModel(body({ model: 'up/chat', messages: [] })), 'up/chat');
  assert.equal(requestModel(Buffer.from('{"model":"up\\/chat"}')), 'up/chat');
  assert.equal(requestModel(body({ metadata: { model: 'nested' }, model: 'up/chat' })), 'up/chat');
  assert.equal(requestModel(body({ prompt: 'x'.repeat(5000), model: 'up/chat' })), 'up/chat');
  assert.equal(requestModel(body({ prompt: 'no model' })), undefined);
  assert.equal(requestModel(Buffer.from('{not json')), undefined);
});
