// Both MCP wires on one endpoint, with the MCP SDK v2 (@modelcontextprotocol/server):
// - 2026-07-28 (`modern`): stateless by design; the SDK's createMcpHandler checks each request's `_meta` envelope
//   and the Mcp-Method / Mcp-Name / Mcp-Param-* headers against the body (-32020, 400), answers server/discover,
//   stamps `resultType` and the caching hints, and echoes the request id on its errors;
// - 2025-11-25 and earlier (`legacy`): initialize, then one POST per message, answered with one JSON document
//   (no session, no server-initiated stream), as this gateway always served it.
// The SDK's own classification (isLegacyRequest) decides which wire a request is on. One McpServer per request,
// from mcpSurface (server.ts), whichever the wire.
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { mcpSurface, type McpDeps, type McpSurface } from './server.ts';

export interface McpWire {
  surface: McpSurface;
  /** answers one POST whose JSON body was read already; `origin` is where media URLs point */
  handle(request: Request, body: unknown, origin: string): Promise<Response>;
}

export function mcpWire(deps: McpDeps): McpWire {
  const surface = mcpSurface(deps);
  // what the SDK hands the factory is the request handle() gave it: the origin is looked up by it
  const origins = new WeakMap<Request, string>();
  const modern = createMcpHandler(({ requestInfo }) => surface.serverFor(origins.get(requestInfo!)!, 'modern'), {
    legacy: 'reject',
    maxRequestBodySize: deps.config.bodyLimitBytes,
    // the requests it refuses (a header that disagrees with the body, an unknown version) are the client's doing
    onerror: (error) => deps.log.debug({ err: error }, 'MCP request refused'),
  });

  async function legacy(request: Request, body: unknown, origin: string): Promise<Response> {
    const server = surface.serverFor(origin, 'legacy');
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: body });
    } finally {
      void server.close().catch(() => undefined);
    }
  }

  return {
    surface,
    async handle(request, body, origin) {
      if (await isLegacyRequest(request, body)) return legacy(request, body, origin);
      origins.set(request, origin);
      return modern.fetch(request, { parsedBody: body });
    },
  };
}
