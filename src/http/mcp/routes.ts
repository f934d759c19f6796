// /mcp: the MCP Streamable HTTP transport, stateless, on both MCP wires (wire.ts). Each POST carries its JSON-RPC
// message(s) and gets the answer(s) in one response, so any instance behind a load balancer can answer any request.
// Before any work: the Host and Origin check against DNS rebinding (host-guard.ts), the body's size and JSON, and
// no JSON-RPC batch unless the request's protocol version has batches (2025-03-26 alone; its answer an array, its
// requests' ids distinct). GET (a standalone event stream) and DELETE (ending a session) have nothing to serve
// without sessions: 405, as the MCP SDK's stateless server answers them. Every error here is JSON-RPC. The MCP SDK
// (~0.2 s to load) is imported at the first POST: a gateway no agent reaches over MCP never loads it.
import { Hono } from 'hono';
import type { Config } from '../../config/load.ts';
import { readJsonBody } from '../read-json.ts';
import { requestOrigin } from '../origin.ts';
import { toApiError } from '../render-error.ts';
import { SERVER_JSON_PATH, serverJson } from './discovery.ts';
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, jsonRpcError, MCP_PATH, PARSE_ERROR, TRANSPORT_ERROR } from './json-rpc.ts';
import { allowedHostnames, rebindingRefusal } from './host-guard.ts';
import type { McpDeps } from './server.ts';
import type { McpWire } from './wire.ts';

/** The one protocol version whose wire has JSON-RPC batches; a request without the header is taken to speak it. */
const BATCHING_VERSION = '2025-03-26';
/** even there, one POST carries at most this many messages: a batch must not multiply one request's cost unbounded */
const MAX_BATCH = 16;

/** Why a batch may not be served under this request's protocol version, or undefined when it may. */
function batchRefusal(messages: unknown[], version: string | undefined): string | undefined {
  if ((version ?? BATCHING_VERSION) !== BATCHING_VERSION) return `JSON-RPC batches are not part of MCP ${version}: send one message per POST`;
  if (messages.length > MAX_BATCH) return `a batch holds at most ${MAX_BATCH} messages`;
  // the transport pairs answers with requests by id: two requests of one id would get one answer
  const ids = messages.flatMap((message) => (typeof message === 'object' && message !== null && 'method' in message && 'id' in message ? [JSON.stringify(message.id)] : []));
  if (new Set(ids).size !== ids.length) return 'each request of a batch needs an id of its own';
  return undefined;
}

/**
 * The SDK's JSON answer as JSON-RPC 2.0 has it: a batch's answer an array even of one (the SDK answers a batch of one
 * with the bare object), and params its schema refuses invalid params (-32602) in one line, not an internal error
 * (-32603) quoting zod's issues (the SDK's answer to a malformed `initialize` or `resources/read`).
 */
async function asJsonRpc(response: Response, batch: boolean): Promise<Response> {
  if (!response.headers.get('content-type')?.startsWith('application/json')) return response;
  const text = await response.text();
  const refused = text.includes(`"code":${INTERNAL_ERROR}`);
  if (!refused && !(batch && text.trimStart().startsWith('{'))) return new Response(text, response);
  let answers = JSON.parse(text) as unknown;
  if (refused) answers = Array.isArray(answers) ? answers.map(invalidParams) : invalidParams(answers);
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(batch && !Array.isArray(answers) ? [answers] : answers), { status: response.status, headers });
}

function invalidParams(answer: unknown): unknown {
  const error = (answer as { error?: { code?: unknown; message?: unknown } }).error;
  if (error?.code !== INTERNAL_ERROR || typeof error.message !== 'string' || !error.message.startsWith('[')) return answer;
  let issues: { path?: unknown; message?: unknown }[];
  try {
    issues = JSON.parse(error.message) as typeof issues;
  } catch {
    return answer;
  }
  if (!Array.isArray(issues) || !issues.every((issue) => Array.isArray(issue.path) && typeof issue.message === 'string')) return answer;
  const said = issues.map((issue) => `${(issue.path as unknown[]).join('.')}: ${issue.message as string}`).join('; ');
  return { ...(answer as object), error: { code: INVALID_PARAMS, message: `Invalid params: ${said}` } };
}

export function mcpRoutes(deps: McpDeps & { config: Config }): Hono {
  const allowed = allowedHostnames(deps.config);
  let loading: Promise<McpWire> | undefined;
  const load = () => (loading ??= import('./wire.ts').then((wire) => wire.mcpWire(deps)));
  const app = new Hono();

  app.post(MCP_PATH, async (c) => {
    const refused = rebindingRefusal(c, deps.config, allowed);
    if (refused) return jsonRpcError(403, INVALID_REQUEST, `Forbidden: ${refused}`);
    let body: unknown;
    try {
      body = await readJsonBody(c, deps.config.bodyLimitBytes);
    } catch (error) {
      const apiError = toApiError(error);
      if (!apiError) throw error;
      return jsonRpcError(apiError.status, apiError.code === 'invalid_json' ? PARSE_ERROR : INVALID_REQUEST, apiError.message, apiError.headers);
    }
    const batch = Array.isArray(body) ? batchRefusal(body, c.req.header('Mcp-Protocol-Version')?.trim()) : undefined;
    if (batch) return jsonRpcError(400, INVALID_REQUEST, batch);
    try {
      const wire = await load();
      const response = await wire.handle(c.req.raw, body, requestOrigin(c, deps.config));
      if (response.status >= 500) deps.log.error({ status: response.status }, 'MCP request failed');
      return await asJsonRpc(response, Array.isArray(body));
    } catch (error) {
      deps.log.error({ err: error }, 'MCP request failed');
      return jsonRpcError(500, INTERNAL_ERROR, 'internal error');
    }
  });
  const methodNotAllowed = () => jsonRpcError(405, TRANSPORT_ERROR, 'Method not allowed: this MCP server is stateless; send JSON-RPC messages with POST', { Allow: 'POST' });
  app.get(MCP_PATH, methodNotAllowed);
  app.delete(MCP_PATH, methodNotAllowed);
  app.on(['PUT', 'PATCH'], MCP_PATH, methodNotAllowed);

  app.get(SERVER_JSON_PATH, (c) => c.json(serverJson(deps.config, requestOrigin(c, deps.config), deps.gate.enabledNetworks)));
  return app;
}
