// /openapi.json and /docs as a developer reads them: both payment protocol versions and both schemes named,
// every route listed (GET /v1/models/{id} too), and every operation in a named group (none under "default").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './support/service.ts';
import type { RunningService } from '../src/service.ts';

let service: RunningService;
let doc: Record<string, any>;
before(async () => {
  service = await startTestService({ networks: ['base'] });
  doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as Record<string, any>;
});
after(() => service.stop());

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));

test('every operation is in a declared group: Swagger UI shows no "default" section', () => {
  const declared = new Set((doc.tags as { name: string }[]).map((tag) => tag.name));
  assert.ok(declared.size >= 4);
  for (const { path, method, operation } of operations()) {
    assert.ok(Array.isArray(operation.tags) && operation.tags.length > 0, `${method.toUpperCase()} ${path} has a tag`);
    for (const tag of operation.tags) assert.ok(declared.has(tag), `${method.toUpperCase()} ${path}: tag ${tag} is declared`);
  }
  assert.ok(operations().some(({ path }) => path.startsWith('/admin') || path.includes('admin')), 'the admin routes are in the document');
});

test('a paid route names the v1 and v2 headers and the exact and upto schemes', () => {
  const chat = doc.paths['/api/v1/ai/chat'].post;
  const headers = (chat.parameters as { name: string }[]).map((p) => p.name);
  assert.deepEqual(headers, ['X-Network', 'X-PAYMENT', 'PAYMENT-SIGNATURE']);
  assert.deepEqual(Object.keys(chat.responses['200'].headers), ['X-PAYMENT-RESPONSE', 'PAYMENT-RESPONSE']);
  assert.deepEqual(Object.keys(chat.responses['402'].headers), ['PAYMENT-REQUIRED']);
  for (const text of [chat.description, doc.info.description]) {
    assert.match(text, /PAYMENT-SIGNATURE \(version 2/);
    assert.match(text, /`exact`/);
    assert.match(text, /`upto`/);
  }
});

test('GET /v1/models/{id} is documented and answers as documented', async () => {
  const route = doc.paths['/v1/models/{id}'].get;
  assert.deepEqual(Object.keys(route.responses), ['200', '404']);
  const model = (await (await fetch(`${service.url}/v1/models/local/demo-bigram`)).json()) as Record<string, unknown>;
  assert.equal(model.id, 'local/demo-bigram');
  for (const field of Object.keys(route.responses['200'].content['application/json'].schema.properties)) assert.ok(field in model, field);
  assert.equal((await fetch(`${service.url}/v1/models/no-such-model`)).status, 404);
});

test('/docs says how to pay with either version', async () => {
  const page = await (await fetch(`${service.url}/docs`)).text();
  for (const words of ['PAYMENT-SIGNATURE', 'PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT', '<code>upto</code>', '<code>exact</code>']) assert.ok(page.includes(words), words);
});
