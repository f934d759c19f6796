// What the embedded engine answers a call with, and whether it can within max_tokens: decided the same way before
// the price (a refusal naming the field, costing nothing) and in the run loop.
// - Which tool: the named one; under `required`, the model picks among the names (a grammar of the names); under
//   `auto`, the engine calls a tool when the conversation ends with anything but a tool result, and answers in
//   words once the results are in (text the client adds after them, as agents add reminders, included:
//   endsWithToolResult), so a client's tool loop always completes. One call per answer.
// - A constrained answer (a tool's arguments, a JSON answer) is decoded under a grammar whose longest text fits
//   the tokens left: a token is at least one byte, and the end of the answer takes one more token. So the JSON
//   always closes before max_tokens, and a schema whose shortest answer cannot fit is refused before the price.
import type { LanguageModelV4CallOptions, LanguageModelV4FunctionTool } from '@ai-sdk/provider';
import { clientSchema, type ClientSchema } from './schema/client-schema.ts';
import { MAX_SCHEMA_NODES, UnsupportedSchemaError } from './schema/schema-shape.ts';

/** What json_object (any JSON object) is decoded as: an object with one short string, `answer`. */
export const JSON_OBJECT_SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
} as const;

/** the token that ends a constrained answer */
const END_TOKENS = 1;

/** What a call's answer is: free text, JSON fitting a schema, or a call of one of the tools. */
export type AnswerPlan =
  | { kind: 'text' }
  | { kind: 'json'; schema: object }
  | { kind: 'tool'; tools: LanguageModelV4FunctionTool[] };

export type PlanOptions = Pick<LanguageModelV4CallOptions, 'tools' | 'toolChoice' | 'responseFormat'> & {
  /** the conversation ends with a tool's result */
  endsWithToolResult: boolean;
};

export function answerPlan(options: PlanOptions): AnswerPlan {
  const tools = (options.tools ?? []).filter((tool): tool is LanguageModelV4FunctionTool => tool.type === 'function');
  const choice = options.toolChoice ?? { type: 'auto' };
  if (tools.length > 0 && choice.type !== 'none') {
    if (choice.type === 'tool') return { kind: 'tool', tools: tools.filter((tool) => tool.name === choice.toolName) };
    if (choice.type === 'required' || !options.endsWithToolResult) return { kind: 'tool', tools };
  }
  if (options.responseFormat?.type === 'json') return { kind: 'json', schema: options.responseFormat.schema ?? JSON_OBJECT_SCHEMA };
  return { kind: 'text' };
}

export interface ToolCandidate {
  tool: LanguageModelV4FunctionTool;
  schema: ClientSchema;
}

/**
 * The tools the model may call within `maxTokens` and the bytes their arguments may take. With several tools the
 * name is decoded first (as a JSON string, then the end token), which takes its own share.
 */
export function toolCandidates(tools: readonly LanguageModelV4FunctionTool[], maxTokens: number): { candidates: ToolCandidate[]; budget: number } {
  const nameBytes = tools.length > 1 ? Math.max(...tools.map((tool) => Buffer.byteLength(JSON.stringify(tool.name)))) + END_TOKENS : 0;
  const budget = maxTokens - nameBytes - END_TOKENS;
  const candidates = tools.map((tool) => ({ tool, schema: clientSchema(tool.inputSchema) })).filter(({ schema }) => schema.minBytes <= budget);
  return { candidates, budget };
}

/** the bytes a JSON answer may take */
export const jsonBudget = (maxTokens: number) => maxTokens - END_TOKENS;

/** A JSON Schema the engine cannot follow: which tool's (undefined: the response format's), where, why. */
export interface SchemaProblem {
  tool: number | undefined;
  pointer: string;
  why: string;
}

/**
 * Why the engine cannot follow the call's schemas (or undefined when it can): one is too large or not a schema,
 * or the answer the call asks for cannot fit `maxTokens`. Every schema is read, at most MAX_SCHEMA_NODES
 * subschemas in all.
 */
export function schemaProblem(options: PlanOptions & { maxTokens: number }): SchemaProblem | undefined {
  const allowance = { left: MAX_SCHEMA_NODES };
  const tools = (options.tools ?? []).filter((tool): tool is LanguageModelV4FunctionTool => tool.type === 'function');
  const readAll: Array<[object, number | undefined]> = tools.map((tool, index) => [tool.inputSchema, index]);
  const response = options.responseFormat?.type === 'json' ? options.responseFormat.schema : undefined;
  if (response) readAll.push([response, undefined]);
  for (const [schema, tool] of readAll) {
    try {
      clientSchema(schema, allowance);
    } catch (error) {
      if (error instanceof UnsupportedSchemaError) return { tool, pointer: error.pointer, why: error.message };
      throw error;
    }
  }
  const plan = answerPlan(options);
  if (plan.kind === 'json') {
    const problem = tooLong(clientSchema(plan.schema).minBytes, jsonBudget(options.maxTokens), options.maxTokens, 'answer');
    return problem === undefined ? undefined : { tool: undefined, pointer: '', why: problem };
  }
  if (plan.kind === 'tool') {
    const { candidates, budget } = toolCandidates(plan.tools, options.maxTokens);
    if (candidates.length > 0) return undefined;
    const shortest = plan.tools.reduce((best, tool) => (clientSchema(tool.inputSchema).minBytes < clientSchema(best.inputSchema).minBytes ? tool : best));
    const what = plan.tools.length > 1 ? `tool call (of any of the ${plan.tools.length} tools)` : 'tool call';
    return { tool: tools.indexOf(shortest), pointer: '', why: tooLong(clientSchema(shortest.inputSchema).minBytes, budget, options.maxTokens, what)! };
  }
  return undefined;
}

function tooLong(minBytes: number, budget: number, maxTokens: number, what: string): string | undefined {
  if (minBytes <= budget) return undefined;
  if (minBytes === Infinity) return `no ${what} can be written for it (its constraints contradict each other, or a required reference never ends)`;
  return (
    `its shortest ${what} is ${minBytes} bytes of JSON, more than max_tokens ${maxTokens} leaves for it (${Math.max(0, budget)}; ` +
    'the embedded engine counts a token per byte so the JSON always closes): raise max_tokens or ask for less (minItems, minLength, required properties)'
  );
}
