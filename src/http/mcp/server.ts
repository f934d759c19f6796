// The MCP server: tools/list and tools/call over the paid endpoints, and the free models listing. One server is
// made per HTTP request (the transport is stateless): all it holds is fixed for the process's life, built once.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.ts';
import { endpointContextAt, type PaidRouteDeps } from '../paid/paid-route.ts';
import type { PaidOperation } from '../paid/operations.ts';
import { toApiError } from '../render-error.ts';
import { modelsListing } from '../discovery/models-listing.ts';
import { endpointBody, MODELS_TOOL, MODELS_TOOL_DEFINITION, paidTools, type PaidTool } from './tools.ts';
import { packageVersion, toolExtensions } from './discovery.ts';
import { PAYMENT_META, payForTool } from './payment-edge.ts';
import { deliveredResult, errorResult, paymentRequiredResult } from './tool-results.ts';
import { mcpInstructions } from './instructions.ts';

export interface McpDeps extends PaidRouteDeps {
  /** what is sold (paid/operations.ts): a tool per operation */
  operations: readonly PaidOperation[];
  log: Logger;
}

export interface McpSurface {
  tools: readonly PaidTool[];
  /** a fresh server for one request to an origin (media URLs in its results are under it) */
  serverFor(origin: string): Server;
}

const SERVER_INFO = { name: 'x402-ai-gateway', title: 'x402 AI gateway', version: packageVersion };

export function mcpSurface(deps: McpDeps): McpSurface {
  const { config, catalog } = deps;
  const tools = paidTools(deps.operations, catalog, deps.gate.enabledNetworks, config.bodyLimitBytes);
  const byName = new Map(tools.map((tool) => [tool.name, { tool, extensions: toolExtensions(tool, catalog) }]));
  const listed = [
    ...tools.map((tool) => ({ name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: { openWorldHint: true } })),
    MODELS_TOOL_DEFINITION,
  ];
  const models = modelsListing(catalog, deps.providers);
  const instructions = mcpInstructions(tools, deps.gate.enabledNetworks);

  async function callPaidTool(name: string, input: Record<string, unknown>, meta: Record<string, unknown> | undefined, origin: string): Promise<CallToolResult> {
    const entry = byName.get(name)!;
    const { body, network } = endpointBody(input);
    if (input.network !== undefined && typeof input.network !== 'string') {
      throw new ApiError(400, 'invalid_request', 'network must be a string naming a network', { field: 'network' });
    }
    for (const field of ['stream', 'stream_options']) {
      if (field in body) throw new ApiError(400, 'invalid_request', `${field} is not a tool input: a tool result is one message`, { field });
    }
    const prepared = entry.tool.route.prepare(body, endpointContextAt(origin, deps));
    const payment = await payForTool(deps, { tool: entry.tool, prepared, extensions: entry.extensions, input, payment: meta?.[PAYMENT_META], network });
    switch (payment.kind) {
      case 'delivered':
        return deliveredResult(entry.tool.operation.capability, payment, deps.media);
      case 'payment_required':
        return paymentRequiredResult(payment.required, payment.receipt);
      case 'error':
        return errorResult(payment.error);
    }
  }

  return {
    tools,
    serverFor(origin) {
      const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const { name, arguments: input = {}, _meta: meta } = request.params;
        if (name === MODELS_TOOL) return { content: [{ type: 'text', text: JSON.stringify(models) }], structuredContent: models };
        if (!byName.has(name)) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; tools: ${[...byName.keys(), MODELS_TOOL].join(', ')}`);
        try {
          return await callPaidTool(name, input, meta as Record<string, unknown> | undefined, origin);
        } catch (error) {
          const apiError = toApiError(error);
          if (apiError) return errorResult(apiError);
          deps.log.error({ err: error, tool: name }, 'MCP tool call failed');
          return errorResult(new ApiError(500, 'internal_error', 'internal error; nothing was charged'));
        }
      });
      return server;
    },
  };
}
