// The MCP tools: one per paid operation of the table (paid/operations.ts), its input the spec route's own body (the
// JSON Schema of the same zod schema that validates HTTP bodies) plus `network`, and one free tool listing the
// models and their prices.
import type { ModelCatalog } from '../../providers/catalog.ts';
import type { OperationRoute, PaidOperation } from '../paid/operations.ts';
import { jsonSchema } from '../discovery/openapi-schema.ts';
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import { capabilityPriceRange } from '../../pricing/price-range.ts';
import { formatUsdc } from '../../pricing/usdc.ts';

export const MODELS_TOOL = 'list_models';

/** Body fields of the HTTP routes a tool does not take: an MCP result is one message, never server-sent events. */
const HTTP_ONLY_FIELDS = ['stream', 'stream_options'];

export interface PaidTool {
  name: string;
  operation: PaidOperation;
  /** the route whose body the tool takes and whose translator prepares it: the spec's */
  route: OperationRoute;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

/** `network` is mirrored into this header by 2026-07-28 clients (SEP-2243), so a proxy can route a call by network. */
export const NETWORK_HEADER = 'Network';

/** `mcp://tool/<name>`: the resource a tool's payment is for (the x402 MCP transport's convention). */
export const toolResource = (name: string) => `mcp://tool/${name}`;

/** The paid tools of the operations that have a model to run (as /.well-known/x402 lists only those). */
export function paidTools(operations: readonly PaidOperation[], catalog: ModelCatalog, networks: readonly NetworkName[], bodyLimitBytes: number): PaidTool[] {
  return operations.flatMap((operation) => {
    const range = capabilityPriceRange(catalog.models, operation.capability, bodyLimitBytes);
    const route = operation.routes.find((candidate) => candidate.surface === 'spec');
    if (!range || !route) return [];
    const price = range.min === range.max ? `${formatUsdc(range.min)} USDC` : `${formatUsdc(range.min)} to ${formatUsdc(range.max)} USDC`;
    return [
      {
        name: operation.tool,
        operation,
        route,
        title: operation.endpoint.summary,
        description: `${operation.description} (POST ${route.path} as a tool). Paid per call in USDC through x402: ${price}, priced from the input. Call it without payment to get the exact price; see the server instructions.`,
        inputSchema: toolInputSchema(route, networks),
        outputSchema: paidToolOutputSchema(route.path),
      },
    ];
  });
}

/** The route's body schema without the HTTP-only fields, and `network` (X-Network on the HTTP routes). */
export function toolInputSchema(route: OperationRoute, networks: readonly NetworkName[]): Record<string, unknown> {
  const schema = jsonSchema(route.requestSchema);
  const properties = { ...(schema.properties as Record<string, unknown>) };
  for (const field of HTTP_ONLY_FIELDS) delete properties[field];
  properties.network = {
    type: 'string',
    enum: networks.flatMap((name) => [name, NETWORKS[name].caip2]),
    description: 'The network to pay on (a name or its CAIP-2 id). Without it the payment requirements offer every network; with it, that network with every scheme it has',
    'x-mcp-header': NETWORK_HEADER,
  };
  return { ...schema, properties };
}

/** The tool's input as the endpoint's body: without `network`, which only picks the requirements offered. */
export function endpointBody(input: Record<string, unknown>): { body: Record<string, unknown>; network: string | undefined } {
  const { network, ...body } = input;
  return { body, network: typeof network === 'string' ? network : undefined };
}

/**
 * What a paid tool's `structuredContent` is, whichever way the call went: the paid result, the x402
 * PaymentRequired of the tool-result binding (an MCP client validates an error result's structuredContent against
 * the outputSchema too), or a refusal. Each shape is told apart by its required fields.
 */
function paidToolOutputSchema(path: string): Record<string, unknown> {
  const text = { type: 'string' };
  return {
    type: 'object',
    anyOf: [
      {
        title: 'Paid result',
        type: 'object',
        required: ['result', 'charged'],
        properties: {
          result: { type: 'object', description: `the 200 body of POST ${path}` },
          charged: {
            type: 'object',
            description: 'what was charged (amount in USDC atomic units) and its settlement',
            required: ['amount', 'usdc', 'network'],
            properties: { amount: text, usdc: text, network: text, transaction: text },
          },
          usage: { type: 'object', description: 'tokens used (chat)', properties: { promptTokens: { type: 'integer' }, completionTokens: { type: 'integer' }, totalTokens: { type: 'integer' } } },
        },
      },
      {
        title: 'Payment required (x402 v2 PaymentRequired)',
        type: 'object',
        required: ['x402Version', 'accepts'],
        properties: { x402Version: { const: 2 }, error: text, resource: { type: 'object' }, accepts: { type: 'array', items: { type: 'object' } }, extensions: { type: 'object' } },
      },
      {
        title: 'Refused (nothing was charged unless the message says so)',
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'object', required: ['code', 'message'], properties: { status: { type: 'integer' }, code: text, message: text, field: text } } },
      },
    ],
  };
}

export const MODELS_TOOL_DEFINITION = {
  name: MODELS_TOOL,
  title: 'Models and prices',
  description: 'Lists the models of each paid tool with their limits and prices (USDC atomic units and decimal). Free.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  outputSchema: { type: 'object', required: ['currency', 'models'], properties: { currency: { type: 'object' }, models: { type: 'array', items: { type: 'object' } } } },
  annotations: { readOnlyHint: true, openWorldHint: false },
} as const;
