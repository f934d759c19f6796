// JSON-RPC as /mcp answers its own errors (the MCP SDK answers the rest): the path, the error codes of the JSON-RPC
// 2.0 spec, an error response, and the shape of the app's errors under /mcp (a missing Host, an unrouted method),
// which render-error.ts gives every answer there.
import type { ErrorShape } from '../render-error.ts';

export const MCP_PATH = '/mcp';

/** JSON-RPC 2.0 error codes (the spec's): the body is no JSON, no valid request, bad params; a failure of ours. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** what the MCP SDK answers for a transport-level refusal (405 and the like) */
export const TRANSPORT_ERROR = -32000;

const errorBody = (code: number, message: string, data?: Record<string, unknown>) => ({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null });

export function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(errorBody(code, message)), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

export const mcpErrorShape: ErrorShape = ({ status, code, message, field }) =>
  errorBody(status >= 500 ? INTERNAL_ERROR : status === 405 ? TRANSPORT_ERROR : INVALID_REQUEST, message, { code, ...(field ? { field } : {}) });
