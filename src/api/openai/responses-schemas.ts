// Request and response bodies of POST /v1/responses (OpenAI's Responses API), stateless: as OpenAI states
// them, limited to what the gateway can honour. Unknown fields are a 400 naming the field (strict objects);
// fields that need state kept between calls are named by STORED_STATE_FIELDS and refused before any price.
import { z } from 'zod';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');
const text = z.string().max(100_000);

const inputText = z.object({ type: z.literal('input_text'), text }).strict();
const inputImage = z
  .object({
    type: z.literal('input_image'),
    image_url: z.string().max(20_000_000).optional().describe('A data: URL (base64) or an https URL'),
    file_id: z.string().nullable().optional().describe('Not supported: files are stored state'),
    detail: z.enum(['low', 'high', 'auto']).optional().describe('Accepted and not used'),
  })
  .strict();
/** an earlier assistant answer sent back as history */
const outputText = z
  .object({ type: z.literal('output_text'), text, annotations: z.array(z.unknown()).max(100).optional(), logprobs: z.array(z.unknown()).optional() })
  .strict();
const refusal = z.object({ type: z.literal('refusal'), refusal: text }).strict();

const messageItem = z
  .object({
    type: z.literal('message').optional(),
    id: z.string().max(200).optional(),
    status: z.string().max(40).optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([text, z.array(z.union([inputText, inputImage, outputText, refusal])).min(1).max(100)]),
  })
  .strict();

const functionCallItem = z
  .object({
    type: z.literal('function_call'),
    id: z.string().max(200).optional(),
    call_id: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    arguments: z.string().max(100_000),
    status: z.string().max(40).optional(),
  })
  .strict();

const functionCallOutputItem = z
  .object({
    type: z.literal('function_call_output'),
    id: z.string().max(200).nullable().optional(),
    call_id: z.string().min(1).max(200),
    output: z.union([text, z.array(z.union([inputText, inputImage])).max(100)]),
    status: z.string().max(40).nullable().optional(),
  })
  .strict();

export const responsesInputItem = z.union([messageItem, functionCallItem, functionCallOutputItem]);
export type ResponsesInputItem = z.infer<typeof responsesInputItem>;

const functionTool = z
  .object({
    type: z.literal('function'),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a tool name is 1 to 64 letters, digits, _ or -'),
    description: z.string().max(10_000).nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional().describe('A JSON Schema of the arguments'),
    strict: z.boolean().nullable().optional(),
  })
  .strict();

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), name: z.string().min(1).max(64) }).strict(),
]);

const textFormat = z.union([
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
      schema: z.record(z.string(), z.unknown()),
      description: z.string().max(10_000).optional(),
      strict: z.boolean().nullable().optional(),
    })
    .strict(),
]);

export const responsesRequestSchema = z
  .object({
    model: modelId,
    input: z.union([text, z.array(responsesInputItem).min(1).max(200)]).describe('A string (one user message), or input items'),
    instructions: text.nullable().optional().describe('A system message put before the input'),
    tools: z.array(functionTool).max(128).optional().describe('Function tools only'),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    text: z.object({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() }).strict().optional(),
    max_output_tokens: z.number().int().min(1).nullable().optional().describe('Upper bound of the answer; at most the model ceiling'),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    stream: z.boolean().nullable().optional().describe('true: the Responses server-sent events, response.created to response.completed'),
    stream_options: z.object({ include_obfuscation: z.boolean().optional() }).strict().nullable().optional().describe('Accepted and not used'),
    store: z.boolean().nullable().optional().describe('Always false here: nothing is stored; the answer says store: false'),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional().describe('Echoed in the answer'),
    truncation: z.literal('disabled').nullable().optional(),
    user: z.string().max(200).optional().describe('Accepted and not used'),
    safety_identifier: z.string().max(200).optional().describe('Accepted and not used'),
    prompt_cache_key: z.string().max(200).optional().describe('Accepted and not used'),
    service_tier: z.enum(['auto', 'default']).nullable().optional().describe('Accepted: one tier here'),
  })
  .strict();
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/**
 * Fields of OpenAI's Responses request that need state this stateless gateway does not keep (stored
 * responses, conversations, prompts, background runs) or that it cannot honour: a 400 naming the field,
 * before any price.
 */
export const REFUSED_RESPONSES_FIELDS: Readonly<Record<string, string>> = {
  previous_response_id: 'stored responses are not kept here (stateless): send the whole conversation as input items',
  conversation: 'conversations are not kept here (stateless): send the whole conversation as input items',
  prompt: 'stored prompt templates are not kept here: send instructions and input',
  background: 'background responses need stored state; not supported',
  include: 'no extra output (reasoning, logprobs, tool results) is available here',
  reasoning: 'reasoning settings are not supported by the models here',
  service_tier: 'not supported by this gateway',
  top_logprobs: 'not supported by this gateway',
  max_tool_calls: 'only function tools are offered, one model call per request',
  context_management: 'not supported by this gateway',
};

const usage = z.object({
  input_tokens: z.number().int(),
  input_tokens_details: z.object({ cached_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int(),
});

const outputMessage = z.object({
  type: z.literal('message'),
  id: z.string(),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
  role: z.literal('assistant'),
  content: z.array(z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) })),
});
const outputFunctionCall = z.object({
  type: z.literal('function_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string().describe('The arguments as a JSON string'),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
});
export type OutputMessage = z.infer<typeof outputMessage>;
export type OutputFunctionCall = z.infer<typeof outputFunctionCall>;
export type OutputItem = OutputMessage | OutputFunctionCall;

export const responsesResponseSchema = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number().int(),
  status: z.enum(['completed', 'incomplete', 'in_progress']),
  error: z.null(),
  incomplete_details: z.object({ reason: z.string() }).nullable(),
  instructions: z.string().nullable(),
  max_output_tokens: z.number().int().nullable(),
  model: z.string(),
  output: z.array(z.union([outputMessage, outputFunctionCall])),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.null(),
  reasoning: z.object({ effort: z.null(), summary: z.null() }),
  store: z.literal(false).describe('Always false: nothing is stored'),
  temperature: z.number().nullable(),
  text: z.object({ format: z.record(z.string(), z.unknown()) }),
  tool_choice: z.unknown(),
  tools: z.array(z.unknown()),
  top_p: z.number().nullable(),
  truncation: z.literal('disabled'),
  usage: usage.nullable(),
  user: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
});
export type ResponsesResponse = z.infer<typeof responsesResponseSchema>;

export const responsesEventSchema = z
  .object({
    type: z.string().describe('response.created, response.in_progress, response.output_item.added, ..., response.completed (or response.incomplete), or error'),
    sequence_number: z.number().int(),
    x402: z
      .object({ success: z.boolean(), transaction: z.string(), network: z.string(), payer: z.string(), amount: z.string() })
      .optional()
      .describe('On response.completed / response.incomplete: the payment receipt and the amount charged (atomic units)'),
  })
  .passthrough()
  .describe('One server-sent event (`event: <type>` then `data: <this>`)');
