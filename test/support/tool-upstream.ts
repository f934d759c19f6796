// A local HTTP server speaking OpenAI's Chat Completions protocol with tool calls, for tests of the chat
// surfaces' tool paths through an upstream: when the request offers tools and does not say tool_choice
// "none", it calls the first tool (or the one tool_choice names) with TOOL_ARGUMENTS, finish_reason
// "tool_calls" (after TOOL_PREAMBLE as text when the last message says "explain"); otherwise it answers
// TOOL_UPSTREAM_TEXT, cut after max_tokens words (finish_reason "length") when that is fewer. Streamed, the call comes as OpenAI sends it (the
// call's id and name, then its arguments in fragments), and usage last. Usage reports cached prompt tokens.
// A tool that takes a `prompt` (a paid chat tool, as an MCP host lists x402-ai mcp's), wherever it is among the tools, is called once, with
// PROMPT_TOOL_ARGUMENTS; once the conversation holds that call, the model answers in words, so an agent's turn ends.
// Every request body is recorded, so a test can assert what the gateway sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TOOL_ARGUMENTS = '{"city":"Paris","days":3}';
export const PROMPT_TOOL_ARGUMENTS = '{"model":"local/demo-bigram","prompt":"One short sentence about the sea.","max_tokens":16}';
export const TOOL_PREAMBLE = 'Let me look that up.';
export const TOOL_UPSTREAM_TEXT = 'It is clear and 21 degrees in Paris.';
export const TOOL_UPSTREAM_USAGE = { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52, prompt_tokens_details: { cached_tokens: 32 } };

export interface ToolUpstream {
  baseURL: string;
  /** the JSON bodies the gateway sent, in order */
  requests: Record<string, any>[];
  close(): Promise<void>;
}

export async function startToolUpstream(): Promise<ToolUpstream> {
  const requests: Record<string, any>[] = [];
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw) as Record<string, any>;
    requests.push(body);
    const base = { id: 'chatcmpl-up', created: 1_700_000_000, model: body.model };
    const choice = body.tool_choice;
    // the named tool, else one that takes a prompt (an MCP host's paid chat tool among its own), else the first
    const promptTool = body.tools?.find((t: any) => t.function.parameters?.properties?.prompt !== undefined);
    const offered = body.tools?.length && choice !== 'none' ? (typeof choice === 'object' ? body.tools.find((t: any) => t.function.name === choice.function.name) : (promptTool ?? body.tools[0])) : undefined;
    const takesPrompt = offered?.function.parameters?.properties?.prompt !== undefined;
    const calledBefore = body.messages.some((message: any) => message.tool_calls?.some((call: any) => call.function.name === offered?.function.name));
    const tool: string | undefined = takesPrompt && calledBefore ? undefined : offered?.function.name;
    const call = { id: 'call_up1', type: 'function', function: { name: tool, arguments: takesPrompt ? PROMPT_TOOL_ARGUMENTS : TOOL_ARGUMENTS } };
    const preamble = tool && JSON.stringify(body.messages.at(-1)).includes('explain') ? TOOL_PREAMBLE : undefined;
    const words = TOOL_UPSTREAM_TEXT.split(/(?<= )/);
    const limit = body.max_completion_tokens ?? body.max_tokens;
    const cut = !tool && typeof limit === 'number' && limit < words.length;
    const text = cut ? words.slice(0, limit).join('') : TOOL_UPSTREAM_TEXT;
    const finish = tool ? 'tool_calls' : cut ? 'length' : 'stop';
    if (!body.stream) {
      const message = tool ? { role: 'assistant', content: preamble ?? null, tool_calls: [call] } : { role: 'assistant', content: text };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage: TOOL_UPSTREAM_USAGE }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const chunk = (delta: unknown, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    chunk({ role: 'assistant', content: '' });
    if (tool) {
      if (preamble) for (const word of preamble.split(/(?<= )/)) chunk({ content: word });
      chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: tool, arguments: '' } }] });
      for (const piece of [call.function.arguments.slice(0, 9), call.function.arguments.slice(9)]) chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
    } else {
      for (const word of text.split(/(?<= )/)) chunk({ content: word });
    }
    chunk({}, finish);
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage: TOOL_UPSTREAM_USAGE })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
