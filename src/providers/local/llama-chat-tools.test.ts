// The embedded engine honours tools and JSON schemas offline: whatever the toy model's words, every forced
// tool call's arguments and every json_schema answer validate against the client's schema (checked here
// with Ajv, the reference JSON Schema validator, independently of the engine's own check).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import { z } from 'zod';
import { generateText, jsonSchema, Output, streamText, tool, type ModelMessage } from 'ai';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { createDemoChatModel } from './local-chat-catalog.ts';
import { answerPlan, schemaProblem } from './answer-plan.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'llama-tools-test-'));
const model = createDemoChatModel({ dataDir });
after(async () => {
  await model.dispose();
  await rm(dataDir, { recursive: true, force: true });
});

const ajv = new Ajv({ strict: false });

/** what an agent's weather tool might declare: nesting, enums, bounded numbers, arrays, optional fields, $defs */
const weatherParameters = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { enum: ['celsius', 'fahrenheit'] },
    when: { type: 'string', format: 'date' },
    threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    place: { $ref: '#/$defs/place' },
    tags: { type: 'array', items: { type: 'string', maxLength: 10 }, maxItems: 5 },
    note: { type: ['string', 'null'] },
  },
  required: ['city', 'days', 'unit'],
  additionalProperties: false,
  $defs: {
    place: { type: 'object', properties: { lat: { type: 'number', minimum: -90, maximum: 90 }, country: { type: 'string', maxLength: 2, minLength: 2 } }, required: ['lat'] },
  },
} satisfies JSONSchema7;
const validWeather = ajv.compile(weatherParameters);

const answerSchema = {
  type: 'object',
  properties: {
    answer: { type: 'string' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    sources: { type: 'array', items: { type: 'object', properties: { title: { type: 'string' }, rank: { type: 'integer', minimum: 1 } }, required: ['title', 'rank'] }, minItems: 1 },
    done: { type: 'boolean' },
  },
  required: ['answer', 'confidence', 'sources', 'done'],
  additionalProperties: false,
} satisfies JSONSchema7;
const validAnswer = ajv.compile(answerSchema);

const tools = {
  get_weather: tool({ description: 'Weather for a city', inputSchema: jsonSchema(weatherParameters) }),
  search: tool({ description: 'Search the web', inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }) }),
};

test('a named tool is always called, with arguments that validate against its schema, whatever the seed', async () => {
  for (let seed = 1; seed <= 12; seed++) {
    const result = await generateText({ model, prompt: 'What is the weather in Oslo?', tools, toolChoice: { type: 'tool', toolName: 'get_weather' }, seed, temperature: 1.2 });
    assert.equal(result.finishReason, 'tool-calls');
    assert.equal(result.toolCalls.length, 1);
    const [call] = result.toolCalls;
    assert.equal(call!.toolName, 'get_weather');
    assert.ok(validWeather(call!.input), `seed ${seed}: ${JSON.stringify(call!.input)} ${ajv.errorsText(validWeather.errors)}`);
    assert.match(call!.toolCallId, /^call_/);
    assert.ok((result.usage.outputTokens ?? 0) > 0);
  }
});

test("a `number` without bounds is a small whole number: Codex reads its sleep tool's duration_ms as a u64, and waits that long", async () => {
  // Codex's clock.sleep, as it declares it; 1.42 or -5 there failed Codex's tool call ("expected u64"), 1839845 had it
  // wait half an hour
  const sleep = tool({
    description: 'Pause execution for a specified duration.',
    inputSchema: jsonSchema({ type: 'object', properties: { duration_ms: { type: 'number' }, counts: { type: 'array', items: { type: 'number' } } }, required: ['duration_ms', 'counts'], additionalProperties: false }),
  });
  for (let seed = 1; seed <= 12; seed++) {
    const result = await generateText({ model, prompt: 'Wait a little.', tools: { sleep }, toolChoice: { type: 'tool', toolName: 'sleep' }, seed, temperature: 1.5 });
    const { duration_ms, counts } = result.toolCalls[0]!.input as { duration_ms: number; counts: number[] };
    for (const value of [duration_ms, ...counts]) assert.ok(Number.isSafeInteger(value) && value >= 0 && value <= 999, `seed ${seed}: ${JSON.stringify(result.toolCalls[0]!.input)}`);
  }
});

test('required: the model picks one of the tools, and its arguments validate', async () => {
  const validSearch = ajv.compile({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
  const seen = new Set<string>();
  for (let seed = 1; seed <= 8; seed++) {
    const { toolCalls } = await generateText({ model, prompt: 'Find something', tools, toolChoice: 'required', seed });
    assert.equal(toolCalls.length, 1);
    const [call] = toolCalls;
    seen.add(call!.toolName);
    assert.ok(call!.toolName === 'get_weather' ? validWeather(call!.input) : validSearch(call!.input), JSON.stringify(call));
  }
  assert.ok(seen.size >= 1);
});

test('a json_schema answer always validates', async () => {
  for (let seed = 1; seed <= 12; seed++) {
    const result = await generateText({ model, prompt: 'Answer in JSON', output: Output.object({ schema: jsonSchema(answerSchema) }), seed, temperature: 1.2, maxOutputTokens: 128 });
    const value: unknown = JSON.parse(result.text);
    assert.ok(validAnswer(value), `seed ${seed}: ${result.text} ${ajv.errorsText(validAnswer.errors)}`);
    assert.equal(result.finishReason, 'stop', 'a constrained answer is never cut at max_tokens');
  }
});

test('json_object (no schema) is a JSON object', async () => {
  for (let seed = 1; seed <= 5; seed++) {
    const result = await model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'JSON' }] }], responseFormat: { type: 'json' }, seed });
    const [part] = result.content;
    assert.equal(part?.type, 'text');
    const value: unknown = JSON.parse((part as { text: string }).text);
    assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), (part as { text: string }).text);
  }
});

test('auto calls a tool first, then answers in words once the tool result is in: a tool loop completes', async () => {
  const first = await generateText({ model, prompt: 'Weather in Oslo?', tools, seed: 3 });
  assert.equal(first.toolCalls.length, 1);
  const [call] = first.toolCalls;
  const messages: ModelMessage[] = [
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: call!.toolCallId, toolName: call!.toolName, input: call!.input }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: call!.toolCallId, toolName: call!.toolName, output: { type: 'json', value: { temperature: 4 } } }] },
  ];
  const second = await generateText({ model, messages, tools, seed: 3, maxOutputTokens: 20 });
  assert.equal(second.toolCalls.length, 0);
  assert.ok(second.text.trim().length > 0);
  assert.deepEqual(answerPlan({ endsWithToolResult: false, toolChoice: { type: 'none' }, tools: [{ type: 'function', name: 'x', inputSchema: {} }] }), { kind: 'text' });
});

test('streamed: the call opens with its name, then argument fragments that add up to the arguments', async () => {
  const result = streamText({ model, prompt: 'Weather?', tools, toolChoice: { type: 'tool', toolName: 'get_weather' }, seed: 9 });
  let opened: { id: string; toolName: string } | undefined;
  let streamed = '';
  let input: unknown;
  for await (const part of result.fullStream) {
    if (part.type === 'tool-input-start') opened = { id: part.id, toolName: part.toolName };
    else if (part.type === 'tool-input-delta') streamed += part.delta;
    else if (part.type === 'tool-call') input = part.input;
  }
  assert.equal(opened?.toolName, 'get_weather');
  assert.deepEqual(JSON.parse(streamed), input);
  assert.ok(validWeather(input), streamed);
});

test('a schema as zod 4 writes it (draft 2020-12, bounded integers, a date with its pattern) is followed too', async () => {
  const schema = z.toJSONSchema(
    z.object({ city: z.string(), days: z.number().int().min(1).max(5), when: z.iso.date(), id: z.uuid(), kind: z.enum(['a', 'b']), note: z.string().nullable() }),
  ) as JSONSchema7;
  assert.match(String(schema.$schema), /2020-12/);
  const valid = new Ajv2020({ strict: false }).compile(schema);
  for (let seed = 1; seed <= 4; seed++) {
    const { toolCalls } = await generateText({ model, prompt: 'Plan', tools: { plan: tool({ inputSchema: jsonSchema(schema) }) }, toolChoice: 'required', seed });
    assert.ok(valid(toolCalls[0]!.input), `${JSON.stringify(toolCalls[0]!.input)}: ${JSON.stringify(valid.errors)}`);
  }
});

/** what coding agents declare: Claude Code's Bash and Edit shapes (allOf included), a todo list, a recursive tree */
const agentTools = {
  Bash: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command to execute' },
      timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' },
      description: { type: 'string' },
      run_in_background: { type: 'boolean' },
    },
    required: ['command'],
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  },
  Edit: {
    allOf: [
      { type: 'object', properties: { file_path: { type: 'string' }, old_string: { type: 'string' } }, required: ['file_path', 'old_string'] },
      { properties: { new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } }, required: ['new_string'] },
    ],
  },
  TodoWrite: {
    type: 'object',
    properties: {
      todos: {
        type: 'array',
        items: { type: 'object', properties: { content: { type: 'string', minLength: 1 }, status: { enum: ['pending', 'in_progress', 'completed'] }, id: { type: 'string', pattern: '^[a-z]{2}-[0-9]{1,3}$' } }, required: ['content', 'status', 'id'] },
      },
    },
    required: ['todos'],
  },
  Plan: {
    type: 'object',
    properties: { days: { type: 'integer' }, budget: { type: 'number' }, root: { $ref: '#/$defs/node' }, when: { type: 'string', format: 'date-time' } },
    required: ['days', 'budget', 'root', 'when'],
    $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] } },
  },
} as const;

test('a forced tool call validates 200 times out of 200 (different tools, seeds, prompts and max_tokens)', async () => {
  const validators = Object.fromEntries(Object.entries(agentTools).map(([name, schema]) => [name, ajv.compile(schema)]));
  const functionTools = Object.entries(agentTools).map(([name, inputSchema]) => ({ type: 'function' as const, name, inputSchema: inputSchema as JSONSchema7 }));
  const failures: string[] = [];
  const run = async (i: number) => {
    const name = Object.keys(agentTools)[i % 4]!;
    const result = await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: `task ${i}: ${'please do it '.repeat(i % 7)}` }] }],
      tools: functionTools,
      toolChoice: { type: 'tool', toolName: name },
      seed: 1_000 + i,
      temperature: 0.6 + (i % 5) * 0.2,
      maxOutputTokens: [64, 128, 256, 512][i % 4],
    });
    const call = result.content.find((part) => part.type === 'tool-call');
    const input = call ? (JSON.parse(call.input) as unknown) : undefined;
    const numbers = JSON.stringify(input).match(/-?\d+(\.\d+)?([eE][-+]?\d+)?/g) ?? [];
    if (result.finishReason.unified !== 'tool-calls' || !validators[name]!(input) || numbers.some((n) => !Number.isFinite(Number(n)) || Math.abs(Number(n)) >= 1e9)) {
      failures.push(`#${i} ${name}: ${call?.input} ${ajv.errorsText(validators[name]!.errors)}`);
    }
  };
  for (let i = 0; i < 200; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].map(run));
  assert.deepEqual(failures, []);
});

test("a coding agent's tool set (25 tools, descriptions of 10,777 characters) is read in milliseconds and a call picks one", async () => {
  const schemas = Object.values(agentTools);
  const tools = Array.from({ length: 25 }, (_, i) => ({
    type: 'function' as const,
    name: `tool_${i}`,
    description: 'Executes a given command in a persistent shell session with optional timeout. '.repeat(140).slice(0, 10_777),
    inputSchema: schemas[i % schemas.length] as JSONSchema7,
  }));
  const before = process.cpuUsage();
  assert.equal(schemaProblem({ tools, toolChoice: { type: 'auto' }, endsWithToolResult: false, maxTokens: 128 }), undefined);
  const used = process.cpuUsage(before);
  assert.ok((used.user + used.system) / 1000 < 500, `${(used.user + used.system) / 1000} ms`);
  const result = await model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'Fix the bug' }] }], tools, seed: 5, maxOutputTokens: 128 });
  const call = result.content.find((part) => part.type === 'tool-call')!;
  const index = Number(call.toolName.replace('tool_', ''));
  assert.ok(ajv.validate(schemas[index % schemas.length]!, JSON.parse(call.input)), call.input);
});
