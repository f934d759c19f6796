// Each agent surface takes what mainstream agent clients send by default, paid through @x402/fetch on the sandbox
// chain: what a model can honour reaches it (thinking, effort, context_management, structured output; Codex's
// custom, namespace and tool_search tools), what changes nothing the client relies on is accepted and named in
// X-Ignored-Fields, a max_tokens above the model's ceiling is lowered to it, priced as lowered and named in
// X-Clamped-Fields; a refusal names the client's own field in its own syntax. Local servers speak Anthropic's and
// OpenAI's protocols in the place of upstream APIs (agent-upstreams.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';
import { postJson } from './support/service.ts';
import { balanceOf, exactPayingFetch, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { THINKING, type AgentUpstream } from './support/agent-upstreams.ts';
import { startAgentGateway, UP_ANTHROPIC, UP_OPENAI, type AgentGateway } from './support/agent-gateway.ts';
import { sseData } from './support/sse.ts';
import { DEMO_CHAT_MODEL } from '../src/config/engines.ts';
import Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { z } from 'zod';
import type { RunningService } from '../src/service.ts';

const SANDBOX = DEMO_CHAT_MODEL.id;
const FUNDS = 20_000_000n;

let gateway: AgentGateway;
let openaiUp: AgentUpstream;
let anthropicUp: AgentUpstream;
let service: RunningService;
let buyer: PrivateKeyAccount;

before(async () => {
  gateway = await startAgentGateway({ model: { supports: { reasoning: true } } });
  ({ service, openaiUp, anthropicUp } = gateway);
  buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
});
after(() => gateway?.stop());

const post = (path: string, body: unknown) => postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });

/** A paid call: the answer (its JSON, or its events when streamed), checked charged once on-chain. */
async function paid(path: string, body: Record<string, unknown>) {
  const before = await balanceOf(service, 'base', buyer.address);
  const response = await exactPayingFetch(buyer)(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-network': 'base' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const events: Record<string, any>[] = [];
  let json: Record<string, any> = {};
  if (body.stream) for await (const data of sseData(response)) events.push(data === '[DONE]' ? {} : JSON.parse(data));
  else json = (await response.json()) as Record<string, any>;
  assert.equal(await balanceOf(service, 'base', buyer.address), before - BigInt(response.headers.get('x-payment-amount')!));
  return { headers: response.headers, json, events };
}

/** what the 402 asks for a body */
async function quote(path: string, body: unknown): Promise<bigint> {
  const response = await post(path, body);
  assert.equal(response.status, 402, await response.clone().text());
  return BigInt(((await response.json()) as { accepts: Array<{ maxAmountRequired: string }> }).accepts[0]!.maxAmountRequired);
}

const ignoredOf = (headers: Headers) => (headers.get('x-ignored-fields') ?? '').split(', ').filter(Boolean);

const readTool = { name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };

/** a /v1/messages body with what Claude Code sends by default besides its prompt */
const claudeCodeDefaults = {
  max_tokens: 32_000,
  stream: false,
  system: [
    { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332' },
    { type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Read notes.txt', cache_control: { type: 'ephemeral' } }] },
    { role: 'system', content: 'Working directory: /tmp/project' },
  ],
  tools: [readTool, { name: 'Later', description: 'Loaded on demand', input_schema: { type: 'object', properties: {} }, defer_loading: true }],
  metadata: { user_id: '{"device_id":"d"}' },
  // interactive Claude Code in its auto permission mode: the context of Anthropic's own check of its tool calls
  safeguards: [{ type: 'dangerous_tool_use', classifier_context: { v: 1, permission_mode: 'auto', platform: 'linux', live_cwd: '/tmp/project' } }],
  thinking: { type: 'adaptive', display: 'omitted' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'medium' },
};

describe('/v1/messages takes what Claude Code sends', () => {
  test('on the sandbox model: each field that changes nothing there named, max_tokens lowered to the ceiling and priced so', async () => {
    for (const stream of [false, true]) {
      const { headers } = await paid('/v1/messages', { ...claudeCodeDefaults, model: SANDBOX, stream });
      assert.deepEqual(ignoredOf(headers).sort(), [
        'context_management',
        'messages.*.content.*.cache_control',
        'metadata',
        'output_config.effort',
        'safeguards',
        'system.*.cache_control',
        'thinking',
        'tools.*.defer_loading',
      ]);
      assert.equal(headers.get('x-clamped-fields'), `max_tokens=${DEMO_CHAT_MODEL.maxTokens}`);
    }
    const asked = { ...claudeCodeDefaults, model: SANDBOX };
    assert.equal(await quote('/v1/messages', asked), await quote('/v1/messages', { ...asked, max_tokens: DEMO_CHAT_MODEL.maxTokens }), 'priced at the ceiling');
  });

  test('on an Anthropic-protocol upstream that thinks: thinking, effort and context_management reach it, its thinking comes back signed and goes back', async () => {
    for (const stream of [false, true]) {
      const { headers, json, events } = await paid('/v1/messages', { ...claudeCodeDefaults, model: UP_ANTHROPIC, stream, thinking: { type: 'enabled', budget_tokens: 1024 } });
      const sent = anthropicUp.received.at(-1)!;
      assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 1024 });
      assert.equal(sent.max_tokens, 4096, 'the budget counted in the (lowered) max_tokens, as Anthropic counts it');
      assert.deepEqual(sent.output_config, { effort: 'medium' });
      assert.deepEqual(sent.context_management, { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] });
      assert.deepEqual(ignoredOf(headers).sort(), ['metadata', 'safeguards', 'tools.*.defer_loading']);
      const content = stream ? blocksOf(events) : json.content;
      assert.deepEqual(content[0], { type: 'thinking', ...THINKING });
      assert.equal(content[1].type, 'tool_use');
    }
    const turn = {
      ...claudeCodeDefaults,
      model: UP_ANTHROPIC,
      messages: [
        ...claudeCodeDefaults.messages,
        { role: 'assistant', content: [{ type: 'thinking', ...THINKING }, { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'PELICAN' }] },
      ],
    };
    await paid('/v1/messages', turn);
    const history = anthropicUp.received.at(-1)!.messages.find((message: any) => message.role === 'assistant');
    assert.deepEqual(history.content[0], { type: 'thinking', ...THINKING });
  });

  test('output_config.format: the answer is JSON following the schema, on the sandbox model', async () => {
    const schema = { type: 'object', properties: { word: { type: 'string', maxLength: 20 } }, required: ['word'], additionalProperties: false };
    const { json } = await paid('/v1/messages', { model: SANDBOX, max_tokens: 64, messages: [{ role: 'user', content: 'one word' }], output_config: { format: { type: 'json_schema', schema } } });
    const answer = JSON.parse(json.content[0].text) as { word: unknown };
    assert.equal(typeof answer.word, 'string');
  });

  test('refusals name the field in Anthropic’s syntax, and an unknown block or tool type by its name', async () => {
    const base = { model: SANDBOX, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
    const refused = async (extra: Record<string, unknown>, message: RegExp) => {
      const response = await post('/v1/messages', { ...base, ...extra });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { error: { message: string } }).error.message, message);
    };
    await refused({ tools: [{ ...readTool, input_schema: { type: 'objekt' } }] }, /^tools\.0\.input_schema: /);
    await refused({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'video', url: 'x' }] }] }, /^messages\.0\.content\.1\.type: unknown type "video"/);
    await refused({ tools: [{ type: 'custom', name: 'bad name!', input_schema: {} }] }, /^tools\.0\.name: /);
  });

  test('a thinking display newer than summarized and omitted (`updates`, which Claude Code sends with --verbose) is taken and named, not passed on', async () => {
    const { headers } = await paid('/v1/messages', { ...claudeCodeDefaults, model: UP_ANTHROPIC, thinking: { type: 'adaptive', display: 'updates' } });
    assert.equal(anthropicUp.received.at(-1)!.thinking.type, 'adaptive');
    assert.equal(anthropicUp.received.at(-1)!.thinking.display, undefined);
    assert.ok(ignoredOf(headers).includes('thinking.display'), ignoredOf(headers).join(', '));
  });

  test('a tool result with Claude Code’s reminder after it ends the tool loop on the sandbox model: the answer is words', async () => {
    const { json } = await paid('/v1/messages', {
      ...claudeCodeDefaults,
      model: SANDBOX,
      messages: [
        { role: 'user', content: 'Read notes.txt' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'PELICAN' }, { type: 'text', text: '<system-reminder>Keep the todo list current.</system-reminder>' }] },
      ],
    });
    assert.deepEqual(json.content.map((block: { type: string }) => block.type), ['text']);
    assert.equal(json.stop_reason, 'end_turn');
  });

  test('what the Anthropic SDK types is taken: hints named, nulls as not given, top_k honoured, output_format as output_config.format', async () => {
    const hints = { cache_control: { type: 'ephemeral' }, speed: 'standard', inference_geo: null, diagnostics: { previous_message_id: 'msg_1' } };
    const nulls = { temperature: null, top_p: null, stop_sequences: null, thinking: { type: 'adaptive', display: null }, output_config: { effort: null } };
    const tools = [{ ...readTool, type: null }];
    const { headers } = await paid('/v1/messages', { model: SANDBOX, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...hints, ...nulls, tools, top_k: -1 });
    assert.deepEqual(ignoredOf(headers).sort(), ['cache_control', 'diagnostics', 'speed', 'thinking']);
    const between = await paid('/v1/messages', { model: SANDBOX, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'between_tools' } });
    assert.deepEqual(ignoredOf(between.headers), ['thinking']);
    await paid('/v1/messages', { model: UP_ANTHROPIC, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], top_k: 40, stop_sequences: ['a', 'b', 'c', 'd', 'e', 'f'] });
    assert.equal(anthropicUp.received.at(-1)!.top_k, 40);
    assert.deepEqual(anthropicUp.received.at(-1)!.stop_sequences, ['a', 'b', 'c', 'd', 'e', 'f']);
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const { json } = await paid('/v1/messages', { model: SANDBOX, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], output_format: { type: 'json_schema', schema } });
    assert.equal(typeof JSON.parse(json.content.at(-1).text).answer, 'string');
  });

  test('a thread is refused in the shape the SDK reads: its tool runner goes on without threads', async () => {
    const response = await post('/v1/messages', { model: SANDBOX, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], thread: { type: 'create' } });
    assert.equal(response.status, 400);
    assert.deepEqual(((await response.json()) as { error: { details: unknown } }).error.details, { error_code: 'thread_unsupported_request', unsupported: ['thread'] });
    const sent: unknown[] = [];
    const weather = betaZodTool({ name: 'get_weather', description: 'Weather at a place', inputSchema: z.object({ city: z.string() }), run: async () => 'sunny' });
    const watched = new Anthropic({
      baseURL: service.url,
      apiKey: 'sk-ant-not-needed',
      maxRetries: 0,
      fetch: async (url, init) => {
        sent.push(JSON.parse(String(init?.body ?? '{}')).thread);
        return exactPayingFetch(buyer)(url, init);
      },
    });
    const final = await watched.beta.messages.toolRunner({ model: SANDBOX, max_tokens: 32, max_iterations: 2, tools: [weather], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    assert.equal(final.role, 'assistant');
    assert.deepEqual(sent.slice(0, 2), [{ type: 'create' }, undefined], 'threaded first, then on without');
  });

  test('a tool Anthropic runs itself is left out and named, not refused', async () => {
    const { headers } = await paid('/v1/messages', { model: UP_ANTHROPIC, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }, readTool] });
    assert.deepEqual(ignoredOf(headers), ['tools.*']);
    assert.deepEqual(anthropicUp.received.at(-1)!.tools.map((tool: any) => tool.name), ['Read']);
  });
});

/** the content blocks of a Messages stream, assembled as the Anthropic SDK assembles them */
function blocksOf(events: Record<string, any>[]): Record<string, any>[] {
  const blocks: Record<string, any>[] = [];
  for (const event of events) {
    if (event.type === 'content_block_start') blocks[event.index] = { ...event.content_block };
    if (event.type !== 'content_block_delta') continue;
    const block = blocks[event.index]!;
    if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking;
    if (event.delta.type === 'signature_delta') block.signature = event.delta.signature;
    if (event.delta.type === 'text_delta') block.text += event.delta.text;
    if (event.delta.type === 'input_json_delta') block.json = (block.json ?? '') + event.delta.partial_json;
  }
  return blocks;
}

/** a /v1/responses body with what Codex sends by default besides its prompt */
const codexDefaults = {
  stream: false,
  store: false,
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning: { effort: 'medium', summary: 'auto' },
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: 'session-1',
  client_metadata: { session_id: 'session-1' },
  text: { verbosity: 'low' },
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the bug' }] },
  ],
  tools: [
    { type: 'function', name: 'exec_command', description: 'Runs a command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
    { type: 'custom', name: 'apply_patch', description: 'Edits files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' } },
    { type: 'namespace', name: 'agents', description: 'Sub-agents', tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: { task: { type: 'string' } } } }] },
    { type: 'tool_search', execution: 'client', description: 'Finds tools', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
    { type: 'web_search', external_web_access: false },
  ],
};

describe('/v1/responses takes what Codex sends', () => {
  test('on the sandbox model: every tool kind offered as a function, web_search left out and named, the rest named', async () => {
    const { headers } = await paid('/v1/responses', { ...codexDefaults, model: SANDBOX });
    assert.deepEqual(ignoredOf(headers).sort(), ['client_metadata', 'include', 'prompt_cache_key', 'reasoning.effort', 'text.verbosity', 'tools[]']);
  });

  test('each tool kind’s call goes back as its own item, whole and streamed', async () => {
    const cases: [string | { type: string; name: string; namespace?: string }, Record<string, unknown>][] = [
      [{ type: 'custom', name: 'apply_patch' }, { type: 'custom_tool_call', name: 'apply_patch' }],
      [{ type: 'function', name: 'spawn', namespace: 'agents' }, { type: 'function_call', name: 'spawn', namespace: 'agents' }],
      [{ type: 'function', name: 'tool_search' }, { type: 'tool_search_call', execution: 'client' }],
    ];
    for (const [choice, expected] of cases) {
      for (const stream of [false, true]) {
        const { json, events } = await paid('/v1/responses', { ...codexDefaults, model: SANDBOX, tool_choice: choice, stream, max_output_tokens: 64 });
        const output = stream ? events.findLast((event) => event.type === 'response.completed')!.response.output : json.output;
        const call = output.find((item: any) => item.type !== 'message' && item.type !== 'reasoning');
        for (const [key, value] of Object.entries(expected)) assert.equal(call[key], value, `${JSON.stringify(choice)}: ${key}`);
        if (call.type === 'custom_tool_call') assert.equal(typeof call.input, 'string');
        if (stream && call.type === 'custom_tool_call') {
          const done = events.find((event) => event.type === 'response.custom_tool_call_input.done');
          assert.equal(done!.input, call.input);
        }
      }
    }
  });

  test('Codex’s history items are taken: reasoning, custom_tool_call and its output, tool_search_call and its output', async () => {
    const input = [
      ...codexDefaults.input,
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Look first.' }], encrypted_content: 'opaque' },
      { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
      { type: 'custom_tool_call_output', call_id: 'call_1', output: 'patch applied' },
      { type: 'tool_search_call', call_id: 'call_2', arguments: { query: 'github' }, execution: 'client', status: 'completed' },
      {
        type: 'tool_search_output',
        call_id: 'call_2',
        execution: 'client',
        tools: [{ type: 'function', name: 'gh_issue', description: 'Reads an issue', parameters: { type: 'object', properties: {} } }],
      },
      { type: 'function_call', call_id: 'call_3', name: 'spawn', namespace: 'agents', arguments: '{"task":"x"}' },
      { type: 'function_call_output', call_id: 'call_3', output: 'done' },
      // an output Codex adds by itself, answering no call (its goal): context for the model
      { type: 'function_call_output', id: 'fco_1', name: 'goal_objective', namespace: 'agent', output: 'Write the report' },
    ];
    await paid('/v1/responses', { ...codexDefaults, model: UP_OPENAI, input, max_output_tokens: 64 });
    const sent = openaiUp.received.at(-1)!;
    assert.deepEqual(
      sent.tools.map((tool: any) => tool.function.name),
      ['exec_command', 'apply_patch', 'agents__spawn', 'tool_search', 'gh_issue'],
    );
    const calls = sent.messages.flatMap((message: any) => message.tool_calls ?? []).map((call: any) => [call.function.name, call.function.arguments]);
    assert.deepEqual(calls, [
      ['apply_patch', JSON.stringify({ input: '*** Begin Patch\n*** End Patch\n' })],
      ['tool_search', '{"query":"github"}'],
      ['agents__spawn', '{"task":"x"}'],
    ]);
    assert.deepEqual(sent.messages.at(-1), { role: 'user', content: '[agent.goal_objective output]\nWrite the report' });
    assert.equal(sent.reasoning_effort, 'medium');
  });

  test('a model’s reasoning comes back as a reasoning item, whole and streamed', async () => {
    for (const stream of [false, true]) {
      const { json, events } = await paid('/v1/responses', { ...codexDefaults, model: UP_OPENAI, stream, max_output_tokens: 64 });
      const output = stream ? events.findLast((event) => event.type === 'response.completed')!.response.output : json.output;
      assert.deepEqual(output[0].summary, [{ type: 'summary_text', text: THINKING.thinking }]);
      if (stream) assert.equal(events.find((event) => event.type === 'response.reasoning_summary_text.delta')!.delta, THINKING.thinking);
    }
  });

  test('a reasoning item handed back with the encrypted_content the gateway gave goes to an Anthropic upstream as its signed thinking', async () => {
    const input = [
      ...codexDefaults.input,
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: THINKING.thinking }], encrypted_content: `signature:${THINKING.signature}` },
      { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'notes.txt' },
    ];
    await paid('/v1/responses', { ...codexDefaults, model: UP_ANTHROPIC, input, max_output_tokens: 2048 });
    const sent = anthropicUp.received.at(-1)!;
    assert.deepEqual(sent.output_config, { effort: 'medium' });
    const assistant = sent.messages.find((message: any) => message.role === 'assistant');
    assert.deepEqual(assistant.content[0], { type: 'thinking', ...THINKING });
  });

  test('refusals name the field in OpenAI’s syntax', async () => {
    const response = await post('/v1/responses', { model: SANDBOX, input: 'hi', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f', parameters: { type: 'objekt' } }] }] });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { param: string } }).error.param, 'tools[0].tools[0].parameters');
  });
});

describe('an image a tool returned', () => {
  test('is said in its place and named, on /v1/messages (Claude Code reading a screenshot) and /v1/responses (Codex view_image)', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const messages = await paid('/v1/messages', {
      model: SANDBOX,
      max_tokens: 16,
      tools: [readTool],
      messages: [
        { role: 'user', content: 'Look at shot.png' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'shot.png' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }] },
      ],
    });
    assert.deepEqual(ignoredOf(messages.headers), ['messages.*.content.*.content.*']);
    const responses = await paid('/v1/responses', {
      model: SANDBOX,
      max_output_tokens: 16,
      input: [
        { role: 'user', content: 'Look at shot.png' },
        { type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"shot.png"}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', image_url: `data:image/png;base64,${png}` }] },
      ],
    });
    assert.deepEqual(ignoredOf(responses.headers), ['input[].output[]']);
  });
});

describe('blocks that hold text in another form, and the blocks of tools Anthropic ran', () => {
  test('a plain-text document, a search result and a tool reference are read as text; a PDF, citations and web search history are named', async () => {
    const { headers } = await paid('/v1/messages', {
      model: SANDBOX,
      max_tokens: 16,
      tools: [readTool],
      messages: [
        { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Notes: the sea is large.' }, title: 'notes.txt' }, { type: 'text', text: 'Summarise.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'sea' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'The sea is large.', citations: [{ type: 'web_search_result_location', url: 'https://example.com', title: 'x', cited_text: 'y', encrypted_index: 'z' }] },
            { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.pdf' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
                { type: 'search_result', title: 'Sea', source: 'https://example.com', content: [{ type: 'text', text: 'Large.' }] },
                { type: 'tool_reference', tool_name: 'Later' },
              ],
            },
          ],
        },
      ],
    });
    assert.deepEqual(ignoredOf(headers).sort(), ['messages.*.content.*', 'messages.*.content.*.citations', 'messages.*.content.*.content.*']);
  });
});

describe("OpenAI's newer tool choices and the items of tools OpenAI ran", () => {
  const weather = { type: 'function', name: 'weather', description: 'Weather at a place', parameters: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] } };
  const time = { type: 'function', name: 'time', description: 'The time', parameters: { type: 'object', properties: {} } };

  test('allowed_tools offers only the tools it names, in its mode, on /v1/responses and /v1/chat/completions', async () => {
    const responses = await paid('/v1/responses', {
      model: UP_OPENAI,
      input: 'Weather in Oslo?',
      tools: [weather, time],
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'weather' }] },
    });
    assert.deepEqual(openaiUp.received.at(-1)!.tools.map((tool: { function: { name: string } }) => tool.function.name), ['weather']);
    assert.equal(openaiUp.received.at(-1)!.tool_choice, 'required');
    assert.equal(responses.json.status, 'completed');
    const chatTools = [weather, time].map(({ type, ...fn }) => ({ type, function: fn }));
    await paid('/v1/chat/completions', {
      model: UP_OPENAI,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: chatTools,
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'time' } }] } },
    });
    assert.deepEqual(openaiUp.received.at(-1)!.tools.map((tool: { function: { name: string } }) => tool.function.name), ['time']);
  });

  test('a choice of a tool OpenAI runs reads as auto, and the items of such tools in the history are left out; each named', async () => {
    const { headers } = await paid('/v1/responses', {
      model: SANDBOX,
      max_output_tokens: 16,
      tool_choice: { type: 'web_search_preview' },
      tools: [{ type: 'web_search_preview' }],
      input: [
        { role: 'user', content: 'News?' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'news' } },
        { type: 'compaction', id: 'cmp_1', encrypted_content: 'opaque' },
        { role: 'user', content: 'Go on.' },
      ],
    });
    assert.deepEqual(ignoredOf(headers).sort(), ['input[]', 'tool_choice', 'tools[]']);
  });
});

describe('a file in a message', () => {
  test('a text file sent inline is read as its text; a PDF is said in its place and named, on /v1/chat/completions and /v1/responses', async () => {
    const notes = `data:text/plain;base64,${Buffer.from('The sea is large.').toString('base64')}`;
    const pdf = 'data:application/pdf;base64,JVBERi0xLjQK';
    const chat = await paid('/v1/chat/completions', {
      model: UP_OPENAI,
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: notes, filename: 'notes.txt' } }, { type: 'file', file: { file_data: pdf, filename: 'a.pdf' } }, { type: 'text', text: 'Summarise.' }] }],
    });
    assert.deepEqual(ignoredOf(chat.headers), ['messages[].content[]']);
    assert.match(JSON.stringify(openaiUp.received.at(-1)!.messages), /notes\.txt\\nThe sea is large\..*a file \(a\.pdf\) that is not passed/);
    const responses = await paid('/v1/responses', {
      model: UP_OPENAI,
      input: [{ role: 'user', content: [{ type: 'input_file', file_data: notes, filename: 'notes.txt' }, { type: 'input_text', text: 'Summarise.' }] }],
    });
    assert.equal(ignoredOf(responses.headers).length, 0);
    assert.match(JSON.stringify(openaiUp.received.at(-1)!.messages), /The sea is large\./);
  });
});

describe('a tool call left without its result', () => {
  test('is a 400 naming the call on every agent surface, before any price (never a paid call that fails)', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'Read', arguments: '{}' } }] }, { role: 'user', content: 'again' }] }, 'messages'],
      ['/v1/responses', { input: [{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 'call_1', name: 'Read', arguments: '{}' }, { role: 'user', content: 'again' }] }, 'input'],
      ['/v1/messages', { max_tokens: 16, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] }, { role: 'user', content: 'again' }] }, 'messages'],
    ];
    for (const [path, body, field] of cases) {
      const response = await post(path, { model: SANDBOX, ...body, tools: path === '/v1/messages' ? [readTool] : undefined });
      assert.equal(response.status, 400, path);
      const text = await response.text();
      assert.match(text, new RegExp(`${field}: tool call \\\\?"(call_1|toolu_1)\\\\?" has no result`), path);
    }
  });
});

describe('/v1/chat/completions takes what agent SDKs send', () => {
  test('a 64-bit seed (-1, a random one) is folded into the 31 bits the models take, the same way every time, and said', async () => {
    const body = { model: SANDBOX, messages: [{ role: 'user', content: 'Tell me about the sea' }], max_tokens: 16, temperature: 1.5 };
    const first = await paid('/v1/chat/completions', { ...body, seed: -1 });
    const again = await paid('/v1/chat/completions', { ...body, seed: -1 });
    assert.equal(first.headers.get('x-clamped-fields'), `seed=${2 ** 31 - 1}`);
    assert.equal(first.json.choices[0].message.content, again.json.choices[0].message.content);
    const big = await paid('/v1/chat/completions', { ...body, seed: 2 ** 40 + 5 });
    assert.equal(big.headers.get('x-clamped-fields'), 'seed=5');
  });

  test('extra keys of parts (annotations), name on a tool message, logprobs false, metadata, store: named, not refused', async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.', annotations: [] }], tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'weather', content: '4 degrees' },
    ];
    const { headers } = await paid('/v1/chat/completions', { model: SANDBOX, messages, logprobs: false, metadata: { run: '1' }, store: false, max_tokens: 32 });
    assert.deepEqual(ignoredOf(headers).sort(), ['messages[].content[].annotations', 'messages[].name', 'metadata']);
  });

  test('reasoning_effort reaches a model that thinks; a refusal names the field in OpenAI’s syntax', async () => {
    await paid('/v1/chat/completions', { model: UP_OPENAI, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'low' });
    assert.equal(openaiUp.received.at(-1)!.reasoning_effort, 'low');
    const response = await post('/v1/chat/completions', { model: SANDBOX, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] });
    assert.equal(((await response.json()) as { error: { param: string } }).error.param, 'messages[0].content[0].type');
  });
});
