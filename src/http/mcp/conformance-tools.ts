// The diagnostic tools the official MCP conformance suite (@modelcontextprotocol/conformance, scenario
// `server-stateless`) calls by name to exercise rules no gateway tool touches: a tool that needs a client capability
// the caller did not declare (-32021), a response stream holding no request of the server's, and no log message
// without a requested log level. Offered in sandbox mode only, on the 2026-07-28 wire the scenario speaks; free,
// and they do nothing else.
import { inputRequired, type McpServer } from '@modelcontextprotocol/server';

const EMPTY_INPUT = { type: 'object', properties: {}, additionalProperties: false } as const;
const NOTE = 'Sandbox only: a diagnostic of the MCP conformance suite; free, does nothing useful.';

export const CONFORMANCE_TOOLS = [
  { name: 'test_missing_capability', description: `Needs the client's sampling capability (MissingRequiredClientCapability without it). ${NOTE}`, inputSchema: EMPTY_INPUT },
  { name: 'test_streaming_elicitation', description: `Answers with its result alone: no request of the server's on the response stream. ${NOTE}`, inputSchema: EMPTY_INPUT },
  { name: 'test_logging_tool', description: `Logs at info level, which reaches the client only when its request set a log level. ${NOTE}`, inputSchema: EMPTY_INPUT },
] as const;

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

export function registerConformanceTools(server: McpServer): void {
  const [missingCapability, streaming, logging] = CONFORMANCE_TOOLS;
  server.registerTool(missingCapability.name, { description: missingCapability.description }, (ctx) =>
    ctx.mcpReq.inputResponses?.answer === undefined
      ? inputRequired({ inputRequests: { answer: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Reply: pong' } }], maxTokens: 8 }) } })
      : text('sampled'),
  );
  server.registerTool(streaming.name, { description: streaming.description }, () => text('the result, alone on its stream'));
  server.registerTool(logging.name, { description: logging.description }, async (ctx) => {
    await ctx.mcpReq.log('info', `${logging.name} ran`);
    return text('logged at info');
  });
}
