// A local server in the place of Anthropic's and OpenAI's APIs, for the real agent CLIs: Claude Code calls
// POST /v1/messages (Anthropic's Messages API), Codex POST /v1/responses (OpenAI's Responses API), both streamed.
// It records every request as sent and answers each with the scripted tool loop (scripted-agent.ts): read the
// file, then answer from it. So that the next turns carry them back, it thinks first where the request asks for
// thinking (an Anthropic thinking block with its signature, an OpenAI reasoning item with encrypted content), and
// Codex's freeform apply_patch tool, where offered, is called once before the answer. What it records is what the
// CLIs really send (scripts/capture-agent-requests.ts).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicToolResult, responsesToolResult, scriptedTurn, type ScriptedTurn } from './scripted-agent.ts';

export interface CapturedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

export interface CliUpstream {
  baseURL: string;
  captured: CapturedRequest[];
  close(): Promise<void>;
}

export async function startCliUpstream(file: string): Promise<CliUpstream> {
  const captured: CapturedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      let body: Record<string, any>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
      } catch {
        res.writeHead(400).end();
        return;
      }
      captured.push({ path, headers: req.headers, body });
      const tools = ((body.tools ?? []) as Array<{ name?: string }>).flatMap((tool) => (tool.name ? [tool.name] : []));
      if (path === '/v1/messages') answerMessages(res, body, scriptedTurn(tools, anthropicToolResult(body), file));
      else if (path === '/v1/responses') answerResponses(res, body, scriptedTurn(tools, responsesToolResult(body), file));
      else res.writeHead(404, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    captured,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const USAGE = { input_tokens: 100, output_tokens: 20 };

function answerMessages(res: ServerResponse, body: Record<string, any>, turn: ScriptedTurn): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', { message: { id: 'msg_cli_1', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...USAGE, output_tokens: 1 } } });
  let index = 0;
  if (body.thinking && body.thinking.type !== 'disabled' && 'call' in turn) {
    event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: 'The file will say.' } });
    event('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJlLW9mLXRoZS1jbGktdXBzdHJlYW0=' } });
    event('content_block_stop', { index: index++ });
  }
  if ('call' in turn) {
    event('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_cli_${Date.now()}`, name: turn.call.name, input: {} } });
    event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.call.arguments) } });
  } else {
    event('content_block_start', { index, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { index, delta: { type: 'text_delta', text: turn.text } });
  }
  event('content_block_stop', { index });
  event('message_delta', { delta: { stop_reason: 'call' in turn ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.output_tokens } });
  event('message_stop', {});
  res.end();
}

function answerResponses(res: ServerResponse, body: Record<string, any>, turn: ScriptedTurn): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: sequence++ })}\n\n`);
  const response = { id: 'resp_cli_1', object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'in_progress', model: body.model, output: [] as unknown[] };
  event('response.created', { response });
  const output: Array<Record<string, unknown>> = [];
  if ((body.include as string[] | undefined)?.includes('reasoning.encrypted_content') && 'call' in turn) {
    output.push({ type: 'reasoning', id: 'rs_cli_1', summary: [{ type: 'summary_text', text: 'The file will say.' }], encrypted_content: 'ZW5jcnlwdGVkLXJlYXNvbmluZw==' });
  }
  const patched = (body.input as Array<{ type?: string }>).some((item) => item.type === 'custom_tool_call_output');
  const patchTool = (body.tools as Array<{ type?: string; name?: string }> | undefined)?.some((tool) => tool.type === 'custom' && tool.name === 'apply_patch');
  if ('call' in turn) {
    output.push({ type: 'function_call', id: 'fc_cli_1', call_id: `call_cli_${Date.now()}`, name: turn.call.name, arguments: JSON.stringify(turn.call.arguments), status: 'completed' });
  } else if (patchTool && !patched) {
    const patch = '*** Begin Patch\n*** Add File: answer.txt\n+PELICAN\n*** End Patch\n';
    output.push({ type: 'custom_tool_call', id: 'ctc_cli_1', call_id: `call_cli_${Date.now()}`, name: 'apply_patch', input: patch, status: 'completed' });
  } else {
    output.push({ type: 'message', id: 'msg_cli_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] });
  }
  output.forEach((item, index) => {
    event('response.output_item.added', { output_index: index, item });
    if (item.type === 'message') event('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: (turn as { text: string }).text });
    event('response.output_item.done', { output_index: index, item });
  });
  const usage = { input_tokens: USAGE.input_tokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: USAGE.output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 };
  event('response.completed', { response: { ...response, status: 'completed', output, usage } });
  res.end();
}
