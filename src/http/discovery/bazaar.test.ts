// The bazaar extension of each paid route, checked with @x402/extensions' own facilitator-side helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateDiscoveryExtension, validateAndExtract } from '@x402/extensions/bazaar';
import { bazaarExtension } from './bazaar.ts';
import { PAID_OPERATIONS } from '../paid/operations.ts';

const ENDPOINTS = PAID_OPERATIONS.map((operation) => operation.endpoint);
import { ModelCatalog } from '../../providers/catalog.ts';
import { embeddedModels } from '../../config/embedded-models.ts';

const catalog = new ModelCatalog(embeddedModels());
const ORIGIN = 'https://ai.example.com';

for (const endpoint of ENDPOINTS) {
  test(`${endpoint.path}: a valid bazaar declaration of an http POST with a JSON example body and an example 200`, () => {
    const extension = bazaarExtension(endpoint, catalog)!(ORIGIN) as any;
    assert.deepEqual(validateDiscoveryExtension(extension), { valid: true });
    const { valid, info } = validateAndExtract(extension);
    assert.ok(valid);
    const input = info!.input as Record<string, unknown>;
    assert.deepEqual([input.type, input.method, input.bodyType], ['http', 'POST', 'json']);
    // the examples are what the endpoint really accepts and answers
    assert.doesNotThrow(() => endpoint.requestSchema.parse(input.body));
    assert.doesNotThrow(() => endpoint.responseSchema.parse(info!.output!.example));
    assert.equal((input.body as { model: string }).model, catalog.resolve(endpoint.capability, undefined).id);
  });

  test(`${endpoint.path}: its schemas are the request's and the response's (a body the API refuses fails them)`, () => {
    const extension = bazaarExtension(endpoint, catalog)!(ORIGIN) as any;
    const withUnknownField = { ...extension, info: { ...extension.info, input: { ...extension.info.input, body: { ...extension.info.input.body, maxTokens: 5 } } } };
    assert.equal(validateDiscoveryExtension(withUnknownField).valid, false);
    const badOutput = { ...extension, info: { ...extension.info, output: { type: 'json', example: { model: 7 } } } };
    assert.equal(validateDiscoveryExtension(badOutput).valid, false);
    assert.ok(!JSON.stringify(extension).includes('"description"'), 'descriptions stay in /openapi.json');
  });
}

test('media URLs of the examples are under the origin asked for', () => {
  const images = ENDPOINTS.find((e) => e.capability === 'image')!;
  const example = (bazaarExtension(images, catalog)!('https://other.example') as any).info.output.example;
  assert.match(example.images[0], /^https:\/\/other\.example\/media\/[A-Za-z0-9_-]{22}\.png$/);
});

test('a capability with no model in the catalog declares nothing', () => {
  const speechless = new ModelCatalog(embeddedModels().filter((m) => m.capability !== 'speech'));
  assert.equal(bazaarExtension(ENDPOINTS.find((e) => e.capability === 'speech')!, speechless), undefined);
});
