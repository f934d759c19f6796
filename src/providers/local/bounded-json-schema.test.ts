import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { boundedJsonSchema, STRING_MAX, ARRAY_MAX, UnsupportedSchemaError } from './bounded-json-schema.ts';

const ajv = new Ajv({ strict: false });

test('strings and arrays get an upper bound, never a looser one than the schema', () => {
  assert.deepEqual(boundedJsonSchema({ type: 'string' }), { type: 'string', maxLength: STRING_MAX });
  assert.deepEqual(boundedJsonSchema({ type: 'string', minLength: 3, maxLength: 5 }), { type: 'string', minLength: 3, maxLength: 5 });
  assert.deepEqual(boundedJsonSchema({ type: 'string', minLength: 40 }), { type: 'string', minLength: 40, maxLength: 40 });
  assert.deepEqual(boundedJsonSchema({ type: 'array', items: { type: 'boolean' } }), { type: 'array', items: { type: 'boolean' }, maxItems: ARRAY_MAX });
  assert.deepEqual(boundedJsonSchema({ type: 'array', items: { type: 'null' }, minItems: 5 }), { type: 'array', items: { type: 'null' }, minItems: 5, maxItems: 5 });
});

test('objects write every listed property and nothing else', () => {
  assert.deepEqual(boundedJsonSchema({ type: 'object', properties: { a: { type: 'integer' } } }), {
    type: 'object',
    properties: { a: { type: 'integer' } },
    required: ['a'],
    additionalProperties: false,
  });
});

test('bounded numbers become a few values that satisfy every bound', () => {
  const cases = [
    { type: 'integer', minimum: 1, maximum: 7 },
    { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 3 },
    { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    { type: 'integer', minimum: 10, multipleOf: 5 },
    { type: 'number', maximum: -3.5 },
    { type: 'number', multipleOf: 0.25, minimum: 0.3, maximum: 0.9 },
  ] as const;
  for (const schema of cases) {
    const bounded = boundedJsonSchema(schema) as { enum: number[] };
    assert.ok(bounded.enum.length > 0, JSON.stringify(schema));
    const valid = ajv.compile(schema);
    for (const value of bounded.enum) assert.ok(valid(value), `${value} for ${JSON.stringify(schema)}`);
  }
  assert.throws(() => boundedJsonSchema({ type: 'integer', minimum: 0.2, maximum: 0.8 }), UnsupportedSchemaError);
});

test('$ref is inlined, a recursive one is refused at the depth limit', () => {
  assert.deepEqual(boundedJsonSchema({ $ref: '#/definitions/x', definitions: { x: { type: 'boolean' } } }), { type: 'boolean' });
  const tree = { type: 'object', properties: { child: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } } };
  assert.throws(() => boundedJsonSchema(tree), /deeper than/);
});

test('what a grammar cannot honour is refused by name, with where it is', () => {
  assert.throws(
    () => boundedJsonSchema({ type: 'object', properties: { code: { type: 'string', pattern: '^[a-z]{5}-[0-9]{3}$' } } }),
    (error: unknown) => error instanceof UnsupportedSchemaError && error.pointer === '/properties/code/pattern' && /pattern/.test(error.message),
  );
  assert.throws(() => boundedJsonSchema({ allOf: [{ type: 'string' }] }), /allOf/);
  assert.throws(() => boundedJsonSchema({ type: 'string', format: 'regex' }), /format regex/);
  assert.throws(() => boundedJsonSchema({ $ref: 'https://example.com/schema.json' }), /\$ref/);
});

test('a string with a pattern is written as a fixed example the pattern accepts', () => {
  assert.deepEqual(boundedJsonSchema({ type: 'string', pattern: '^[A-Z]+$' }), { const: 'DEMO' });
  assert.deepEqual(boundedJsonSchema({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date' }), { const: '2026-01-01' });
  assert.deepEqual(boundedJsonSchema({ type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' }), { const: '00000000-0000-4000-8000-000000000000' });
  assert.deepEqual(boundedJsonSchema({ type: 'string', pattern: '^[a-z]+$', minLength: 4 }), { const: 'demo' });
  assert.throws(() => boundedJsonSchema({ type: 'string', pattern: '(' }), /not a valid regular expression/);
});
