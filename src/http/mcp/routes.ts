// /mcp: the MCP Streamable HTTP transport, stateless. Each POST carries its JSON-RPC message(s) and gets the
// answer(s) as one JSON document (no sessions, no server-initiated stream), so any instance behind a load
// balancer can answer any request. GET (a standalone event stream) and DELETE (ending a session) have nothing
// to serve without sessions: 405, as the MCP SDK's stateless server answers them. Every error here is JSON-RPC.
// The MCP SDK (~30 MB resident, ~0.4 s to load on its own) is imported at the first POST: a gateway no agent
// reaches over MCP never loads it.
import { Hono } from 'hono';
import type { Config } from '../../config/load.ts';
import { readJsonBody } from '../read-json.ts';
import { requestOrigin } from '../origin.ts';
import { toApiError } from '../render-error.ts';
import { MCP_PATH, SERVER_JSON_PATH, serverJson } from './discovery.ts';
import type { McpDeps, McpSurface } from './server.ts';

/** JSON-RPC 2.0 error codes (the spec's): the body is no JSON, or no valid request; a failure of ours. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;
/** what the MCP SDK answers for a transport-level refusal (405 and the like) */
const TRANSPORT_ERROR = -32000;

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

interface LoadedMcp {
  surface: McpSurface;
  Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
}

export function mcpRoutes(deps: McpDeps & { config: Config }): Hono {
  let loading: Promise<LoadedMcp> | undefined;
  const load = () =>
    (loading ??= Promise.all([import('./server.ts'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]).then(([server, transport]) => ({
      surface: server.mcpSurface(deps),
      Transport: transport.WebStandardStreamableHTTPServerTransport,
    })));
  const app = new Hono();

  app.post(MCP_PATH, async (c) => {
    let body: unknown;
    try {
      body = await readJsonBody(c, deps.config.bodyLimitBytes);
    } catch (error) {
      const apiError = toApiError(error);
      if (!apiError) throw error;
      return jsonRpcError(apiError.status, apiError.code === 'invalid_json' ? PARSE_ERROR : INVALID_REQUEST, apiError.message);
    }
    let server: ReturnType<McpSurface['serverFor']> | undefined;
    try {
      const { surface, Transport } = await load();
      server = surface.serverFor(requestOrigin(c, deps.config));
      const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw, { parsedBody: body });
    } catch (error) {
      deps.log.error({ err: error }, 'MCP request failed');
      return jsonRpcError(500, INTERNAL_ERROR, 'internal error');
    } finally {
      void server?.close().catch(() => undefined);
    }
  });
  const methodNotAllowed = () => jsonRpcError(405, TRANSPORT_ERROR, 'Method not allowed: this MCP server is stateless; send JSON-RPC messages with POST', { Allow: 'POST' });
  app.get(MCP_PATH, methodNotAllowed);
  app.delete(MCP_PATH, methodNotAllowed);
  app.on(['PUT', 'PATCH'], MCP_PATH, methodNotAllowed);

  app.get(SERVER_JSON_PATH, (c) => c.json(serverJson(deps.config, requestOrigin(c, deps.config), deps.gate.enabledNetworks)));
  return app;
}
