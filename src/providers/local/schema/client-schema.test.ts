// A client's JSON Schema is read within bounds, whatever it holds: the shapes the audit used to freeze the gateway
// (a backtracking pattern, a $ref fan-out, a huge enum, deep nesting) are answered in milliseconds, and a schema
// whose shortest answer cannot fit max_tokens is refused before the price, naming why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientSchema } from './client-schema.ts';
import { schemaProblem } from '../answer-plan.ts';
import { MAX_LEAST, MAX_SCHEMA_NODES, UnsupportedSchemaError } from './schema-shape.ts';
import { fitsSchema } from './schema-validator.ts';
import { linearRegExp } from './linear-regexp.ts';
import { patternGrammar } from './pattern-grammar.ts';

/** milliseconds of CPU (user + system) `work` takes */
function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const tool = (inputSchema: object) => ({ type: 'function' as const, name: 'f', inputSchema });
const problemOf = (schema: object, maxTokens = 128) =>
  schemaProblem({ tools: [tool(schema)], toolChoice: { type: 'required' }, endsWithToolResult: false, maxTokens });

/** the audit's 5.5 KB fan-out: 50 properties x 4 levels of references, 6.25 million leaves if inlined */
function fanOut(width: number, levels: number): object {
  const defs: Record<string, object> = {};
  for (let level = 0; level < levels; level++) {
    const properties: Record<string, object> = {};
    for (let i = 0; i < width; i++) properties[`k${i}`] = level === levels - 1 ? { type: 'string' } : { $ref: `#/$defs/l${level + 1}` };
    defs[`l${level}`] = { type: 'object', properties, required: Object.keys(properties) };
  }
  return { $ref: '#/$defs/l0', $defs: defs };
}

test('a backtracking pattern is never run by a backtracking engine: RE2 answers in linear time', () => {
  const evil = '^[0-9-]{8}([0-9-]+)+x$';
  let matched = true;
  const ms = cpuMs(() => {
    matched = linearRegExp(evil)!.test('0123456789-0123456789-0123456789-0123456789');
  });
  assert.equal(matched, false);
  assert.ok(ms < 200, `${ms} ms`);
  // as a tool's parameter it is written as grammar (a full match), not tried on examples
  const schema = { type: 'object', properties: { code: { type: 'string', pattern: evil } }, required: ['code'] };
  assert.equal(cpuMs(() => assert.equal(problemOf(schema), undefined)) < 200, true);
  assert.ok(clientSchema(schema).grammar(127)!.gbnf.includes('"x"'));
  // a pattern RE2 cannot run (a backreference) is left unchecked rather than run by V8
  assert.equal(linearRegExp('^(a+)+\\1$'), undefined);
  assert.equal(fitsSchema({ type: 'string', pattern: '^(a+)+\\1$' }, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab'), true);
});

test('a $ref fan-out is read once per reference and refused by its size in milliseconds', () => {
  for (const [width, levels] of [
    [50, 4],
    [100, 6],
  ] as const) {
    const schema = fanOut(width, levels);
    let problem: ReturnType<typeof problemOf>;
    const ms = cpuMs(() => {
      problem = problemOf(schema, 512);
    });
    assert.match(problem!.why, /shortest tool call is \d+ bytes/);
    assert.ok(ms < 200, `${width}x${levels}: ${ms} ms`);
  }
});

test('huge enums, deep nesting and long patterns are refused by size, naming the part', () => {
  const enumSchema = { type: 'object', properties: { pick: { enum: Array.from({ length: 200_000 }, (_, i) => `value-${i}`) } } };
  let refusal: ReturnType<typeof problemOf>;
  assert.ok(cpuMs(() => (refusal = problemOf(enumSchema))) < 300);
  assert.match(refusal!.why, new RegExp(`more than ${MAX_SCHEMA_NODES} subschemas`));
  let deep: object = { type: 'string' };
  for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { a: deep } };
  assert.ok(cpuMs(() => (refusal = problemOf(deep))) < 300);
  assert.match(refusal!.why, /nested deeper than 64 levels/);
  assert.match(problemOf({ type: 'string', pattern: 'a'.repeat(5_000) })!.why, /not a valid regular expression/);
  // a chain of references is as deep as its length (each target a level below its reference)
  const defs = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`d${i}`, i === 4_999 ? { type: 'string' } : { $ref: `#/$defs/d${i + 1}` }]));
  assert.ok(cpuMs(() => (refusal = problemOf({ $ref: '#/$defs/d0', $defs: defs }))) < 300);
  assert.match(refusal!.why, /^\/\$defs\/d64: nested deeper than 64 levels/);
  // counts asked for at least are bounded before any item is laid out (a minItems of 10^8 took 25 s and 2 GB)
  for (const [keyword, schema] of [
    ['minItems', { type: 'array', items: { type: 'string' }, minItems: 100_000_001 }],
    ['minProperties', { type: 'object', minProperties: 2 ** 32 }],
    ['minLength', { type: 'string', minLength: 1e9 }],
  ] as const) {
    assert.ok(cpuMs(() => (refusal = problemOf({ type: 'object', properties: { a: schema }, required: ['a'] }))) < 300);
    assert.match(refusal!.why, new RegExp(`^/properties/a/${keyword}: ${keyword} \\d+ asks for more than any answer holds \\(at most ${MAX_LEAST}\\)`));
  }
  // a schema of 3,000 properties (Ajv's compiler took ~10 s on it) is read in milliseconds
  const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
  assert.ok(cpuMs(() => assert.equal(problemOf(wide), undefined)) < 300);
});

test('a refusal is kept: the same schema again costs no new reading', () => {
  const schema = fanOut(60, 5);
  problemOf(schema, 512);
  const again = cpuMs(() => {
    for (let i = 0; i < 100; i++) problemOf(structuredClone(schema), 512);
  });
  assert.ok(again < 300, `100 repeats: ${again} ms`);
});

test('work that could only fail is refused: a shortest answer over max_tokens names the schema and the fix', () => {
  const essays = { type: 'object', properties: { items: { type: 'array', minItems: 40, items: { type: 'string', minLength: 30 } } }, required: ['items'] };
  const problem = schemaProblem({ responseFormat: { type: 'json', schema: essays }, endsWithToolResult: false, maxTokens: 512 });
  assert.equal(problem?.tool, undefined);
  assert.match(problem!.why, /shortest answer is 1331 bytes of JSON, more than max_tokens 512/);
  assert.match(problem!.why, /raise max_tokens/);
  // the same schema fits a larger max_tokens; a contradiction fits none
  assert.equal(schemaProblem({ responseFormat: { type: 'json', schema: essays }, endsWithToolResult: false, maxTokens: 2_000 }), undefined);
  assert.match(problemOf({ allOf: [{ type: 'string' }, { type: 'integer' }] })!.why, /no tool call can be written/);
  // among several tools, those that fit are offered: no refusal while one does
  const tools = [tool(essays), { ...tool({ type: 'object', properties: { q: { type: 'string' } } }), name: 'g' }];
  assert.equal(schemaProblem({ tools, toolChoice: { type: 'required' }, endsWithToolResult: false, maxTokens: 64 }), undefined);
  // under auto after a tool result the engine answers in words: the tools' sizes do not matter
  assert.equal(schemaProblem({ tools: [tool(essays)], endsWithToolResult: true, maxTokens: 64 }), undefined);
});

test('what real agents send is accepted: allOf, $defs, formats, not, if/then, patternProperties, 2020-12 keywords', () => {
  const schemas = [
    { type: 'object', allOf: [{ $ref: '#/$defs/base' }, { properties: { extra: { type: 'boolean' } }, required: ['extra'] }], $defs: { base: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] } } },
    { type: 'object', properties: { when: { type: 'string', format: 'date-time' }, mode: { not: { const: 'x' } } }, if: { required: ['mode'] }, then: { required: ['when'] } },
    { type: 'object', patternProperties: { '^x-': { type: 'string' } }, propertyNames: { maxLength: 20 }, dependentRequired: { a: ['b'] } },
    { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], items: false, minItems: 2, contains: { type: 'integer' } },
    { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { tree: { $ref: '#' } }, unevaluatedProperties: false },
    { type: 'string', format: 'some-format-we-do-not-know', contentMediaType: 'text/plain' },
  ];
  for (const schema of schemas) assert.equal(problemOf(schema), undefined, JSON.stringify(schema));
  assert.throws(() => clientSchema({ type: 'strnig' }), UnsupportedSchemaError);
});

test('patterns become grammar: a full match of the expression, bounded repetitions, JSON escapes', () => {
  const piece = patternGrammar('^[a-z]{5}-[0-9]{3}$', 3)!;
  assert.equal(piece.minChars, 9);
  assert.equal(piece.maxChars, 9);
  assert.equal(patternGrammar('^ab+"$', 2)!.maxBytes, 'abbb\\"'.length);
  assert.equal(patternGrammar('(?=a)b', 3), undefined);
  assert.equal(patternGrammar('\\bword', 3), undefined);
});

test('the grammar for a budget never allows a longer answer', () => {
  const schema = clientSchema({
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'number' } }, c: { anyOf: [{ type: 'integer' }, { type: 'null' }] }, d: { type: 'boolean' } },
    required: ['a'],
  });
  for (const budget of [schema.minBytes, 20, 40, 80, 400]) assert.ok(schema.grammar(budget)!.maxBytes <= budget, `budget ${budget}`);
  assert.equal(schema.grammar(schema.minBytes - 1), undefined);
});

test('merging and checking stay linear: two large enums in allOf, choices of references nested ten deep', () => {
  const values = Array.from({ length: 4_000 }, (_, i) => `v${i}`);
  let problem: ReturnType<typeof problemOf>;
  assert.ok(cpuMs(() => (problem = problemOf({ type: 'object', properties: { v: { allOf: [{ enum: values }, { enum: values.slice(2_000) }] } }, required: ['v'] }))) < 300);
  assert.equal(problem!, undefined);
  // 32 branches of a reference to the next level, ten levels: 32^10 paths for a check that does not remember
  const defs = Object.fromEntries(Array.from({ length: 10 }, (_, level) => [`d${level}`, { anyOf: Array.from({ length: 32 }, () => (level === 9 ? { type: 'integer', minimum: 5 } : { $ref: `#/$defs/d${level + 1}` })) }]));
  const schema = { $ref: '#/$defs/d0', $defs: defs };
  let fits = true;
  assert.ok(cpuMs(() => (fits = fitsSchema(schema, 3))) < 300);
  assert.equal(fits, false);
  assert.equal(fitsSchema(schema, 7), true);
});
