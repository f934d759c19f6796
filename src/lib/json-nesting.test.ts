import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonProblem, MAX_JSON_NESTING, nestsTooDeep } from './json-nesting.ts';

const nested = (levels: number): unknown => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);

test('nesting is counted without the call stack: 100,000 levels are found too deep, under the top-level key', () => {
  assert.deepEqual(jsonProblem({ ok: 1, deep: nested(100_000) }), { kind: 'too_deep', field: 'deep' });
  assert.equal(jsonProblem(nested(MAX_JSON_NESTING)), undefined, 'objects as many levels deep as allowed');
  assert.deepEqual(jsonProblem(nested(MAX_JSON_NESTING + 1)), { kind: 'too_deep', field: 'a' });
  assert.deepEqual(jsonProblem([[1], [[[2]]]], { maxDepth: 3 }), { kind: 'too_deep', field: '1' });
});

test('a key named __proto__ is found only when asked for', () => {
  const body = JSON.parse('{"options":{"__proto__":{"seed":1}}}');
  assert.equal(jsonProblem(body), undefined);
  assert.deepEqual(jsonProblem(body, { protoKeys: true }), { kind: 'proto_key', field: 'options' });
});

test('nestsTooDeep skips the walk for a text too short to nest that deep', () => {
  assert.equal(nestsTooDeep(nested(300), 2 * MAX_JSON_NESTING), false);
  assert.equal(nestsTooDeep(nested(300), 1_801), true);
});
