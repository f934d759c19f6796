// How agents and registries find the MCP surface: the bazaar extension's MCP form for each paid tool (declared in
// its PaymentRequired, as the HTTP routes declare the HTTP form), and the MCP registry's server.json.
import { readFileSync } from 'node:fs';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { Config } from '../../config/load.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { BAZAAR, compactSchema } from '../discovery/bazaar.ts';
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import type { PaidTool } from './tools.ts';
import { MCP_PATH } from './json-rpc.ts';

export const SERVER_JSON_PATH = '/mcp/server.json';
/** the MCP registry's server.json schema this document follows */
export const SERVER_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/**
 * The `extensions` of a tool's PaymentRequired: payment-identifier (optional, as on HTTP) and the bazaar MCP form.
 * They hold no origin (the example's media URLs are relative): the resource `mcp://tool/<name>` names no host,
 * and the gate keeps one PaymentRequired per resource.
 */
export function toolExtensions(tool: PaidTool, catalog: ModelCatalog): Record<string, unknown> {
  const extensions: Record<string, unknown> = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
  const bazaar = bazaarMcpExtension(tool, catalog);
  if (bazaar) extensions[BAZAAR] = bazaar;
  return extensions;
}

function bazaarMcpExtension(tool: PaidTool, catalog: ModelCatalog): unknown {
  const { endpoint } = tool.operation;
  const model = catalog.models.some((m) => m.capability === endpoint.capability) ? catalog.resolve(endpoint.capability, undefined) : undefined;
  const example = model && endpoint.example?.(model, '');
  const declared = declareDiscoveryExtension({
    toolName: tool.name,
    description: tool.description,
    transport: 'streamable-http',
    inputSchema: compactSchema(tool.inputSchema, '#'),
    ...(example ? { example: example.request, output: { example: example.response } } : {}),
  });
  return declared[BAZAAR];
}

export const packageVersion = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** A registry name for this deployment: its host reversed (the namespace the operator proves by DNS), then the service. */
export function registryName(config: Config, origin: string): string {
  const host = new URL(origin).hostname.replace(/^\[|\]$/g, '');
  const namespace = /^[0-9.:]+$/.test(host) ? `local.${host.replace(/[.:]/g, '-')}` : host.split('.').reverse().join('.');
  const server = config.service.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'x402-ai';
  return `${namespace}/${server}`;
}

/** server.json for the MCP registry (https://registry.modelcontextprotocol.io): a remote server at `<origin>/mcp`. */
export function serverJson(config: Config, origin: string, networks: readonly NetworkName[]): Record<string, unknown> {
  const description = config.service.description.length <= 100 ? config.service.description : `${config.service.description.slice(0, 99)}…`;
  return {
    $schema: SERVER_SCHEMA,
    name: registryName(config, origin),
    title: config.service.name,
    description,
    version: packageVersion,
    websiteUrl: `${origin}/docs`,
    remotes: [{ type: 'streamable-http', url: `${origin}${MCP_PATH}` }],
    _meta: {
      'io.modelcontextprotocol.registry/publisher-provided': {
        x402: {
          transport: 'x402 MCP transport (the org.x402/payment extension on MCP 2026-07-28, the tool-result binding otherwise): _meta["x402/payment"] in, _meta["x402/payment-response"] out',
          networks: networks.map((name) => NETWORKS[name].caip2),
          discovery: `${origin}/.well-known/x402`,
        },
      },
    },
  };
}
