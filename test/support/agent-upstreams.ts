// Two local chat upstreams speaking the real wire formats, for tests of tools, images and cached-token usage
// passing through the gateway: OpenAI's Chat Completions (POST /v1/chat/completions) and Anthropic's Messages
// API (POST /v1/messages), each plain and streamed (server-sent events as each vendor sends them).
//
// Both answer the same way: when the request carries tools and its conversation does not end with a tool
// result, a call of the forced tool (or the first one) with TOOL_ARGUMENTS, streamed in fragments; otherwise
// ANSWER_TEXT. Usage reports cache reads (and, on OpenAI's, reasoning tokens). Every request is recorded.
// Each thinks first when the request asks it to: Anthropic's a thinking block (THINKING, with its signature),
// OpenAI's reasoning_content (THINKING's text) for a reasoning_effort.
// Given a file (`script`), both play a coding agent's model instead (scripted-agent.ts): read the file with the
// agent's own tool, then answer from what it holds.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicToolResult, chatToolResult, scriptedTurn } from './scripted-agent.ts';

export const TOOL_ARGUMENTS = '{"city":"Oslo","days":2}';
export const ARGUMENT_FRAGMENTS = ['{"city":', '"Oslo",', '"days":2}'];
export const ANSWER_TEXT = 'It is 4 degrees and grey in Oslo.';
export const THINKING = { thinking: 'Oslo is usually cold.', signature: 'c2lnbmVkIGJ5IHRoZSB1cHN0cmVhbQ==' };
/** what both report: the prompt's tokens, of which most were read from the cache, and the answer's */
export const REPORTED = { inputTokens: 1200, cachedInputTokens: 1000, outputTokens: 20, reasoningTokens: 5 } as const;

export interface AgentUpstream {
  baseURL: string;
  /** the JSON bodies received, oldest first */
  received: Array<Record<string, any>>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
}

async function serve(handle: (body: Record<string, any>, res: ServerResponse) => void, path: string, prefix: string): Promise<AgentUpstream> {
  const received: Array<Record<string, any>> = [];
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== path) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    readJson(req).then(
      (body) => {
        received.push(body);
        handle(body, res);
      },
      () => res.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${prefix}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sse = (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });

/** OpenAI's Chat Completions. */
export function startOpenAIAgentUpstream(script?: { file: string }): Promise<AgentUpstream> {
  return serve(
    (body, res) => {
      const messages = body.messages as Array<{ role: string }>;
      const forced = body.tool_choice?.function?.name as string | undefined;
      const names = ((body.tools ?? []) as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
      const scripted = script && scriptedTurn(names, chatToolResult(body as never), script.file);
      let tool = body.tools?.length && messages.at(-1)?.role !== 'tool' ? (forced ?? names[0]) : undefined;
      let toolArguments = TOOL_ARGUMENTS;
      let answer = ANSWER_TEXT;
      let preamble: string | null = null;
      if (scripted) {
        tool = 'call' in scripted ? scripted.call.name : undefined;
        if ('call' in scripted) [toolArguments, preamble] = [JSON.stringify(scripted.call.arguments), scripted.preamble];
        else answer = scripted.text;
      }
      const fragments = toolArguments === TOOL_ARGUMENTS ? ARGUMENT_FRAGMENTS : [toolArguments];
      const usage = {
        prompt_tokens: REPORTED.inputTokens,
        completion_tokens: REPORTED.outputTokens,
        total_tokens: REPORTED.inputTokens + REPORTED.outputTokens,
        prompt_tokens_details: { cached_tokens: REPORTED.cachedInputTokens },
        completion_tokens_details: { reasoning_tokens: REPORTED.reasoningTokens },
      };
      const head = { id: 'chatcmpl-up', created: 1_700_000_000, model: body.model };
      const finish = tool ? 'tool_calls' : 'stop';
      if (!body.stream) {
        const message = {
          ...(tool ? { role: 'assistant', content: preamble, tool_calls: [{ id: 'call_up_1', type: 'function', function: { name: tool, arguments: toolArguments } }] } : { role: 'assistant', content: answer }),
          ...(body.reasoning_effort ? { reasoning_content: THINKING.thinking } : {}),
        };
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      sse(res);
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
      const delta = (value: Record<string, unknown>) => chunk([{ index: 0, delta: value, finish_reason: null }]);
      delta({ role: 'assistant', content: '' });
      if (body.reasoning_effort) delta({ reasoning_content: THINKING.thinking });
      if (preamble) delta({ content: preamble });
      if (tool) {
        delta({ tool_calls: [{ index: 0, id: 'call_up_1', type: 'function', function: { name: tool, arguments: '' } }] });
        for (const fragment of fragments) delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] });
      } else {
        for (const word of answer.split(/(?<= )/)) delta({ content: word });
      }
      chunk([{ index: 0, delta: {}, finish_reason: finish }]);
      chunk([], { usage });
      res.end('data: [DONE]\n\n');
    },
    '/v1/chat/completions',
    '/v1',
  );
}

/** Anthropic's Messages API. */
export function startAnthropicAgentUpstream(script?: { file: string }): Promise<AgentUpstream> {
  return serve(
    (body, res) => {
      const messages = body.messages as Array<{ role: string; content: string | Array<{ type: string }> }>;
      const last = messages.at(-1);
      // (a user turn may hold the tool results and then a new question: only a result at the very end counts)
      const endsWithResult = Array.isArray(last?.content) && last.content.at(-1)?.type === 'tool_result';
      const forced = body.tool_choice?.type === 'tool' ? (body.tool_choice.name as string) : undefined;
      const names = ((body.tools ?? []) as Array<{ name?: string }>).flatMap((tool) => (tool.name ? [tool.name] : []));
      const scripted = script && scriptedTurn(names, anthropicToolResult(body as never), script.file);
      let tool = body.tools?.length && !endsWithResult ? (forced ?? names[0]) : undefined;
      let toolInput: unknown = JSON.parse(TOOL_ARGUMENTS);
      let answer = ANSWER_TEXT;
      let preamble: string | undefined;
      if (scripted) {
        tool = 'call' in scripted ? scripted.call.name : undefined;
        if ('call' in scripted) [toolInput, preamble] = [scripted.call.arguments, scripted.preamble];
        else answer = scripted.text;
      }
      const fragments = scripted ? [JSON.stringify(toolInput)] : ARGUMENT_FRAGMENTS;
      const thinks = body.thinking && body.thinking.type !== 'disabled';
      // Anthropic counts input_tokens without the cache reads, reported beside them
      const usage = {
        input_tokens: REPORTED.inputTokens - REPORTED.cachedInputTokens,
        cache_read_input_tokens: REPORTED.cachedInputTokens,
        cache_creation_input_tokens: 0,
        output_tokens: REPORTED.outputTokens,
      };
      const message = { id: 'msg_up_1', type: 'message', role: 'assistant', model: body.model, stop_sequence: null };
      const stop = tool ? 'tool_use' : 'end_turn';
      if (!body.stream) {
        const content = [
          ...(thinks ? [{ type: 'thinking', ...THINKING }] : []),
          ...(preamble ? [{ type: 'text', text: preamble }] : []),
          ...(tool ? [{ type: 'tool_use', id: 'toolu_up_1', name: tool, input: toolInput }] : [{ type: 'text', text: answer }]),
        ];
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ...message, content, stop_reason: stop, usage }));
        return;
      }
      sse(res);
      const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
      let index = 0;
      if (thinks) {
        event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: THINKING.thinking } });
        event('content_block_delta', { index, delta: { type: 'signature_delta', signature: THINKING.signature } });
        event('content_block_stop', { index: index++ });
      }
      if (preamble) {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: preamble } });
        event('content_block_stop', { index: index++ });
      }
      if (tool) {
        event('content_block_start', { index, content_block: { type: 'tool_use', id: 'toolu_up_1', name: tool, input: {} } });
        for (const fragment of fragments) event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: fragment } });
      } else {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        for (const word of answer.split(/(?<= )/)) event('content_block_delta', { index, delta: { type: 'text_delta', text: word } });
      }
      event('content_block_stop', { index });
      event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: REPORTED.outputTokens } });
      event('message_stop', {});
      res.end();
    },
    '/v1/messages',
    '/v1',
  );
}
