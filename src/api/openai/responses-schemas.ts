// Request and response bodies of POST /v1/responses (OpenAI's Responses API), stateless: as OpenAI states them and
// as Codex and the OpenAI SDKs send them. A top-level field that needs state kept between calls is a 400 naming it
// (RESPONSES_FIELD_RULES); one that changes nothing the client relies on is accepted and reported in
// X-Ignored-Fields, as is an extra key inside an item, a part or a tool (parseRequest). Lengths are bounded by the
// request body limit, not per field.
import { z } from 'zod';
import type { FieldRules } from '../request-fields.ts';

const modelId = z.string().min(1).max(100).describe('Model identifier, from GET /v1/models');
const text = z.string();

const inputText = z.object({ type: z.literal('input_text'), text }).strict();
const inputImage = z
  .object({
    type: z.literal('input_image'),
    image_url: z.string().nullable().optional().describe('A data: URL (base64) or an https URL'),
    file_id: z.string().nullable().optional().describe('Not supported: files are stored state'),
    detail: z.enum(['low', 'high', 'auto', 'original']).optional().describe('Accepted and not used'),
  })
  .strict();
/** an earlier assistant answer sent back as history */
const outputText = z.object({ type: z.literal('output_text'), text }).strict();
const refusal = z.object({ type: z.literal('refusal'), refusal: text }).strict();
/** a file: a text file sent inline is read as its text; any other is said in its place, and named */
const inputFile = z
  .object({
    type: z.literal('input_file'),
    file_data: z.string().nullable().optional(),
    file_id: z.string().nullable().optional(),
    file_url: z.string().nullable().optional(),
    filename: z.string().max(500).nullable().optional(),
  })
  .strict();
const contentPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusal]);

const messageItem = z
  .object({
    type: z.literal('message').optional(),
    id: z.string().max(200).optional(),
    status: z.string().max(40).optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([text, z.array(contentPart).min(1)]),
  })
  .strict();

const functionCallItem = z
  .object({
    type: z.literal('function_call'),
    id: z.string().max(200).optional(),
    call_id: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    namespace: z.string().max(200).optional().describe('The namespace tool the function belongs to'),
    arguments: z.string(),
    status: z.string().max(40).optional(),
  })
  .strict();

const toolOutput = z.union([text, z.array(z.discriminatedUnion('type', [inputText, inputImage]))]);

/**
 * the client's result of a call (`function_call_output`, `custom_tool_call_output`); one with no `call_id` answers no
 * call of the model's: a tool output the client adds by itself (Codex's `goal_objective`, named with its namespace)
 */
const callOutputItem = <T extends string>(type: T) =>
  z
    .object({
      type: z.literal(type),
      id: z.string().max(200).nullable().optional(),
      call_id: z.string().min(1).max(200).optional(),
      name: z.string().max(200).optional(),
      namespace: z.string().max(200).optional(),
      output: toolOutput,
      status: z.string().max(40).nullable().optional(),
    })
    .strict();

/** the model's earlier call of a custom (freeform) tool: `input` is the text it wrote */
const customToolCallItem = z
  .object({
    type: z.literal('custom_tool_call'),
    id: z.string().max(200).optional(),
    call_id: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    namespace: z.string().max(200).optional(),
    input: text,
    status: z.string().max(40).optional(),
  })
  .strict();

/** the model's earlier reasoning: its summary, and what the provider needs handed back (encrypted_content) */
const reasoningItem = z
  .object({
    type: z.literal('reasoning'),
    id: z.string().max(200).optional(),
    summary: z.array(z.object({ type: z.literal('summary_text'), text }).strict()),
    content: z.array(z.object({ type: z.literal('reasoning_text'), text }).strict()).nullable().optional(),
    encrypted_content: z.string().nullable().optional(),
    status: z.string().max(40).nullable().optional(),
  })
  .strict();

/** the model's earlier call of a client-executed tool_search tool */
const toolSearchCallItem = z
  .object({
    type: z.literal('tool_search_call'),
    id: z.string().max(200).nullable().optional(),
    call_id: z.string().min(1).max(200),
    arguments: z.unknown(),
    execution: z.literal('client').optional(),
    status: z.string().max(40).nullable().optional(),
  })
  .strict();

/** what every tool the model may call declares */
const toolName = z.string().regex(/^[a-zA-Z0-9_.-]{1,128}$/, 'a tool name is 1 to 128 letters, digits, _, . or -');
const deferLoading = z.boolean().optional().describe('Accepted and not used: every tool is loaded');

const functionTool = z
  .object({
    type: z.literal('function'),
    name: toolName,
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional().describe('A JSON Schema of the arguments'),
    strict: z.boolean().nullable().optional(),
    defer_loading: deferLoading,
  })
  .strict();
export type ResponsesFunctionTool = z.infer<typeof functionTool>;

/** a freeform tool: the model writes its input as text, in the format given (a lark or regex grammar, or any text) */
const customTool = z
  .object({
    type: z.literal('custom'),
    name: toolName,
    description: z.string().nullable().optional(),
    format: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('text') }).strict(),
        z.object({ type: z.literal('grammar'), syntax: z.enum(['lark', 'regex']), definition: text }).strict(),
      ])
      .optional(),
    defer_loading: deferLoading,
  })
  .strict();
export type ResponsesCustomTool = z.infer<typeof customTool>;

const namespaceTool = z
  .object({
    type: z.literal('namespace'),
    name: z.string().regex(/^[a-zA-Z0-9_.-]{1,64}$/, 'a namespace is 1 to 64 letters, digits, _, . or -'),
    description: z.string().nullable().optional(),
    tools: z.array(z.discriminatedUnion('type', [functionTool, customTool])),
  })
  .strict()
  .describe('Its tools are offered to the model as <namespace>__<name>; their calls come back under the namespace');

/** a tool search the client runs itself: offered to the model as a function named tool_search */
const toolSearchTool = z
  .object({
    type: z.literal('tool_search'),
    execution: z.literal('client'),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .strict();

/** a tool OpenAI runs itself (web_search, file_search, ...): left out, and named in X-Ignored-Fields */
const hostedTool = z.looseObject({ type: z.string().regex(/^(?!function$|custom$|namespace$)/) });

const responsesTool = z.union([z.discriminatedUnion('type', [functionTool, customTool, namespaceTool, toolSearchTool]), hostedTool]);
export type ResponsesTool = z.infer<typeof responsesTool>;

/** the tools a client's tool_search found: offered to the model from then on */
const toolSearchOutputItem = z
  .object({
    type: z.literal('tool_search_output'),
    id: z.string().max(200).nullable().optional(),
    call_id: z.string().min(1).max(200),
    tools: z.array(responsesTool),
    execution: z.literal('client').optional(),
    status: z.string().max(40).nullable().optional(),
  })
  .strict();

/** tools declared in the input (Codex's newest models): offered to the model as the request's own */
const additionalToolsItem = z
  .object({ type: z.literal('additional_tools'), id: z.string().max(200).optional(), role: z.literal('developer').optional(), tools: z.array(responsesTool) })
  .strict();

/**
 * the items of tools OpenAI ran in an earlier answer (web search, a hosted shell, ...) and a compaction's encrypted
 * summary: nothing a model here can be handed; left out, and named
 */
export const FOREIGN_ITEMS = [
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'computer_call',
  'computer_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'compaction',
] as const;
const foreignItem = z.looseObject({ type: z.enum(FOREIGN_ITEMS) });

/** an earlier answer's output item named by its id: resolved from what this instance keeps (kept-items.ts) */
const itemReference = z.object({ type: z.literal('item_reference'), id: z.string().min(1).max(200) }).strict();

export const responsesInputItem = z.union([
  messageItem,
  z.discriminatedUnion('type', [
    itemReference,
    foreignItem,
    functionCallItem,
    callOutputItem('function_call_output'),
    customToolCallItem,
    callOutputItem('custom_tool_call_output'),
    reasoningItem,
    toolSearchCallItem,
    toolSearchOutputItem,
    additionalToolsItem,
  ]),
]);
export type ResponsesInputItem = z.infer<typeof responsesInputItem>;

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.enum(['function', 'custom']), name: z.string().min(1).max(128), namespace: z.string().max(64).optional() }).strict(),
  z
    .object({
      type: z.literal('allowed_tools'),
      mode: z.enum(['auto', 'required']),
      tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional(), namespace: z.string().optional() })).max(1_000),
    })
    .strict()
    .describe('Only these tools are offered to the model, in this mode'),
  z
    .looseObject({ type: z.string().regex(/^(?!function$|custom$|allowed_tools$)/) })
    .describe('A tool OpenAI runs (web_search, mcp, ...) is left out here: read as auto, and named'),
]);

const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
      schema: z.record(z.string(), z.unknown()),
      description: z.string().optional(),
      strict: z.boolean().nullable().optional(),
    })
    .strict(),
]);

const reasoning = z
  .object({
    effort: z.string().max(20).nullable().optional().describe('Passed to models that think (supports.reasoning)'),
    summary: z.string().max(20).nullable().optional().describe('What the model thought comes back as a reasoning item where the model says it'),
  })
  .strict();

export const responsesRequestSchema = z
  .object({
    model: modelId,
    input: z.union([text, z.array(responsesInputItem).min(1)]).describe('A string (one user message), or input items'),
    instructions: text.nullable().optional().describe('A system message put before the input'),
    tools: z.array(responsesTool).max(1_000).optional().describe('function, custom (freeform), namespace and client tool_search tools; hosted tools are left out'),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    text: z.object({ format: textFormat.optional() }).strict().optional(),
    reasoning: reasoning.nullable().optional().describe('Passed to models that think; accepted and ignored elsewhere'),
    include: z.array(z.string().max(100)).nullable().optional().describe('reasoning.encrypted_content: reasoning items carry what the model needs handed back'),
    max_output_tokens: z.number().int().min(1).nullable().optional().describe("Upper bound of the answer; above the model's ceiling it is lowered to it (X-Clamped-Fields)"),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    stream: z.boolean().nullable().optional().describe('true: the Responses server-sent events, response.created to response.completed'),
    stream_options: z.object({}).strict().nullable().optional(),
    store: z.boolean().nullable().optional().describe('Not false (the default): the answer is kept an hour by this instance, for previous_response_id and item_reference'),
    previous_response_id: z.string().min(1).max(200).nullable().optional().describe("Goes on with that answer's conversation (kept an hour by the instance that gave it): its input and output items come before this input; its instructions and tools do not"),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional().describe('Echoed in the answer'),
    truncation: z.enum(['disabled', 'auto']).nullable().optional().describe('Echoed; auto: a prompt longer than the context loses its start (the embedded engine always does), else as disabled'),
    prompt_cache_key: z.string().max(1_000).nullable().optional().describe('Passed to OpenAI-protocol upstreams; accepted and ignored elsewhere'),
  })
  .strict();
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/** What /v1/responses does with top-level fields outside the schema. */
export const RESPONSES_FIELD_RULES: FieldRules = {
  refused: {
    conversation: 'conversations are not kept here (stateless): send the whole conversation as input items',
    prompt: 'stored prompt templates are not kept here: send instructions and input',
    background: 'background responses need stored state; not supported',
    top_logprobs: 'not supported by this gateway',
    moderation: 'not offered by this gateway',
    image: 'not supported by this gateway (text and tool-calling responses only)',
    access_programs: 'not supported by this gateway',
  },
  ignored: ['client_metadata', 'user', 'safety_identifier', 'service_tier', 'max_tool_calls', 'context_management', 'prompt_cache_retention', 'prompt_cache_options'],
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
  namespace: z.string().optional().describe('The namespace tool the function belongs to'),
  arguments: z.string().describe('The arguments as a JSON string'),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
});
const outputCustomToolCall = z.object({
  type: z.literal('custom_tool_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  input: z.string().describe('The text the model wrote for the freeform tool'),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
});
const outputToolSearchCall = z.object({
  type: z.literal('tool_search_call'),
  id: z.string(),
  call_id: z.string(),
  arguments: z.unknown(),
  execution: z.literal('client'),
  status: z.enum(['in_progress', 'completed', 'incomplete']),
});
const outputReasoning = z.object({
  type: z.literal('reasoning'),
  id: z.string(),
  summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string() })),
  encrypted_content: z.string().optional().describe('With include reasoning.encrypted_content: hand it back with the item in the next turn'),
  status: z.enum(['in_progress', 'completed', 'incomplete']).optional(),
});
export type OutputMessage = z.infer<typeof outputMessage>;
export type OutputFunctionCall = z.infer<typeof outputFunctionCall>;
export type OutputCustomToolCall = z.infer<typeof outputCustomToolCall>;
export type OutputToolSearchCall = z.infer<typeof outputToolSearchCall>;
export type OutputReasoning = z.infer<typeof outputReasoning>;
/** a call the model made, of whichever kind of tool */
export type OutputCall = OutputFunctionCall | OutputCustomToolCall | OutputToolSearchCall;
export type OutputItem = OutputMessage | OutputCall | OutputReasoning;

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
  output: z.array(z.union([outputReasoning, outputMessage, outputFunctionCall, outputCustomToolCall, outputToolSearchCall])),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }),
  store: z.boolean().describe('Whether the answer is kept (an hour, by this instance) for previous_response_id and item_reference'),
  temperature: z.number().nullable(),
  text: z.object({ format: z.record(z.string(), z.unknown()) }),
  tool_choice: z.unknown(),
  tools: z.array(z.unknown()),
  top_p: z.number().nullable(),
  truncation: z.enum(['disabled', 'auto']),
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
