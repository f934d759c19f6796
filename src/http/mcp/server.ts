// The MCP server of one request, for either wire: the paid tools, the free models listing, the resources (price
// list, model catalog, each paid image or audio for its payer) and the list results' caching hints. What is fixed
// for the process's life (tool definitions, listings, instructions) is built once in mcpSurface(); a request gets
// a fresh McpServer over it (the transport is stateless, as the MCP SDK's per-request factory expects).
import { CLIENT_CAPABILITIES_META_KEY, McpServer, type CallToolResult, type ServerContext, type StandardSchemaWithJSON, type Tool } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.ts';
import type { Ledger } from '../../store/ledger.ts';
import { endpointContextAt, type PaidRouteDeps } from '../paid/paid-route.ts';
import type { PaidOperation } from '../paid/operations.ts';
import { toApiError } from '../render-error.ts';
import { modelsListing } from '../discovery/models-listing.ts';
import { endpointBody, MODELS_TOOL, MODELS_TOOL_DEFINITION, paidTools, type PaidTool } from './tools.ts';
import { packageVersion, toolExtensions } from './discovery.ts';
import { PAYMENT_EXTENSION, PAYMENT_META, payForTool } from './payment-edge.ts';
import { deliveredResult, errorResult, paymentRequiredResult } from './tool-results.ts';
import { mcpInstructions } from './instructions.ts';
import { PUBLIC_HINT, registerResources, resourceListings } from './resources.ts';
import { CONFORMANCE_TOOLS, registerConformanceTools } from './conformance-tools.ts';

export interface McpDeps extends PaidRouteDeps {
  /** what is sold (paid/operations.ts): a tool per operation */
  operations: readonly PaidOperation[];
  ledger: Ledger;
  log: Logger;
}

/** Which MCP wire a request came on: `legacy` (2025-11-25 and earlier, after initialize) or `modern` (2026-07-28). */
export type McpEra = 'legacy' | 'modern';

export interface McpSurface {
  tools: readonly PaidTool[];
  /** a fresh server for one request to an origin (media URLs in its results are under it) on one wire */
  serverFor(origin: string, era: McpEra): McpServer;
}

const SERVER_INFO = { name: 'x402-ai-gateway', title: 'x402 AI gateway', version: packageVersion };

/**
 * A tool input schema as the MCP SDK takes one: the JSON Schema it lists (and reads `x-mcp-header` from), with no
 * validation of its own, since the endpoint validates the input itself and answers with the field at fault.
 */
function listedSchema(schema: Record<string, unknown>): StandardSchemaWithJSON {
  return {
    '~standard': {
      version: 1,
      vendor: 'x402-ai-gateway',
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => schema, output: () => schema },
    },
  } as StandardSchemaWithJSON;
}

/** Whether the client of this request advertised the x402 payment extension (per request, 2026-07-28 only). */
function advertisesPaymentExtension(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof capabilities?.extensions?.[PAYMENT_EXTENSION] === 'object';
}

export function mcpSurface(deps: McpDeps): McpSurface {
  const { config, catalog } = deps;
  const tools = paidTools(deps.operations, catalog, deps.gate.enabledNetworks, config.bodyLimitBytes);
  const byName = new Map(tools.map((tool) => [tool.name, { tool, extensions: toolExtensions(tool, catalog) }]));
  const models = modelsListing(catalog, deps.providers);
  const listed = [
    ...tools.map(({ name, title, description, inputSchema, outputSchema }) => ({ name, title, description, inputSchema, outputSchema, annotations: { openWorldHint: true } })),
    MODELS_TOOL_DEFINITION,
  ];
  // the conformance suite's diagnostics: sandbox mode, 2026-07-28 wire only (conformance-tools.ts)
  const withDiagnostics = (era: McpEra) => config.sandbox.enabled && era === 'modern';
  const listedOn = { legacy: listed, modern: withDiagnostics('modern') ? [...listed, ...CONFORMANCE_TOOLS] : listed } as Record<McpEra, Tool[]>;
  const instructions = mcpInstructions(tools, deps.gate.enabledNetworks);
  const resources = resourceListings(deps, tools, models);

  async function callPaidTool(name: string, input: Record<string, unknown>, ctx: ServerContext, origin: string, era: McpEra): Promise<CallToolResult> {
    const entry = byName.get(name)!;
    const { body, network } = endpointBody(input);
    if (input.network !== undefined && typeof input.network !== 'string') {
      throw new ApiError(400, 'invalid_request', 'network must be a string naming a network', { field: 'network' });
    }
    for (const field of ['stream', 'stream_options']) {
      if (field in body) throw new ApiError(400, 'invalid_request', `${field} is not a tool input: a tool result is one message`, { field });
    }
    const prepared = entry.tool.route.prepare(body, endpointContextAt(origin, deps));
    const payment = await payForTool(deps, { tool: entry.tool, prepared, extensions: entry.extensions, input, payment: ctx.mcpReq._meta?.[PAYMENT_META], network });
    switch (payment.kind) {
      case 'delivered':
        return deliveredResult(entry.tool.operation.capability, payment, deps.media);
      case 'payment_required':
        return paymentRequiredResult(payment.required, payment.receipt, era === 'modern' && advertisesPaymentExtension(ctx));
      case 'error':
        return errorResult(payment.error);
    }
  }

  return {
    tools,
    serverFor(origin, era) {
      const server = new McpServer(SERVER_INFO, {
        capabilities: {
          tools: { listChanged: false },
          resources: { listChanged: false, subscribe: false },
          prompts: { listChanged: false },
          extensions: { [PAYMENT_EXTENSION]: {} },
        },
        instructions,
        cacheHints: { 'tools/list': PUBLIC_HINT, 'prompts/list': PUBLIC_HINT, 'resources/list': PUBLIC_HINT, 'resources/templates/list': PUBLIC_HINT, 'server/discover': PUBLIC_HINT },
      });
      for (const { name, title, description, inputSchema } of tools) {
        server.registerTool(name, { title, description, inputSchema: listedSchema(inputSchema) }, async (input, ctx) => {
          try {
            return await callPaidTool(name, input as Record<string, unknown>, ctx, origin, era);
          } catch (error) {
            const apiError = toApiError(error);
            if (apiError) return errorResult(apiError);
            deps.log.error({ err: error, tool: name }, 'MCP tool call failed');
            return errorResult(new ApiError(500, 'internal_error', 'internal error; nothing was charged'));
          }
        });
      }
      server.registerTool(MODELS_TOOL, { ...MODELS_TOOL_DEFINITION, inputSchema: listedSchema(MODELS_TOOL_DEFINITION.inputSchema), outputSchema: undefined }, () => ({
        content: [{ type: 'text', text: JSON.stringify(models) }],
        structuredContent: models,
      }));
      if (withDiagnostics(era)) registerConformanceTools(server);
      registerResources(server, resources, deps, origin);
      // the listing states each tool's outputSchema, which the SDK would otherwise hold every result to, the
      // 2026-07-28 `payment_required` result (no structuredContent) included
      server.server.setRequestHandler('tools/list', () => ({ tools: listedOn[era] }));
      return server;
    },
  };
}
