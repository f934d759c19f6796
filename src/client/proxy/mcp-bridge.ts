// `x402-ai mcp`: a stdio MCP server for hosts that only run local servers (Claude Desktop, `claude mcp add`), in
// front of the gateway's /mcp. It lists the gateway's tools (without their `network` argument: the bridge names
// the network) and calls them; a paid tool's PaymentRequired is paid under the same caps and spend file as the
// proxy (payer.ts), carried in `_meta["x402/payment"]` as x402's MCP transport says, and the host gets the tool's
// result. Past a cap the host gets a tool error naming the cap. stdout is the protocol: everything else goes to stderr.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { paymentRequiredOf } from '../mcp.ts';
import { packageVersion } from '../command-line.ts';
import { CapExceeded, type Budget } from './budget.ts';
import { capMessage } from './caps.ts';
import { PayeeRefused } from './payment-policy.ts';
import { MAX_PAYMENTS_PER_CALL, PENDING_RETRIES, type Payer } from './payer.ts';
import { NOTHING_CHARGED, type Receipt } from './receipts.ts';
import type { PaidCallFacts } from './proxy-server.ts';

const PAYMENT_META = 'x402/payment';
const PAYMENT_RESPONSE_META = 'x402/payment-response';

export interface McpBridgeOptions {
  gateway: string;
  network: string;
  payer: Payer;
  budget: Budget;
  onPaidCall?: (call: PaidCallFacts) => void;
  /** the host's side (default: this process's stdin and stdout) */
  stdin?: Readable;
  stdout?: Writable;
}

export interface McpBridge {
  close(): Promise<void>;
}

export async function startMcpBridge(options: McpBridgeOptions): Promise<McpBridge> {
  const gateway = new Client({ name: 'x402-ai-mcp', version: packageVersion() });
  await gateway.connect(new StreamableHTTPClientTransport(new URL(`${options.gateway}/mcp`)));
  const server = new Server(
    { name: 'x402-ai', version: packageVersion() },
    {
      capabilities: { tools: {} },
      instructions:
        `Tools of the x402 AI gateway at ${options.gateway} (chat, images, speech). Paid tools are paid by this server in USDC on ` +
        `${options.network} under the user's spending caps; call them like any tool. A call refused by a cap says which cap and when it reopens.`,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await gateway.listTools()).tools.map(withoutNetwork) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => callTool(request.params.name, request.params.arguments ?? {}));

  async function callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const input = { ...args, network: options.network };
    const first = (await gateway.callTool({ name, arguments: input })) as CallToolResult;
    let required = paymentRequiredOf(first);
    // a free tool, or the gateway's refusal of the input: the host gets it as it is
    if (!required) return first;
    const surface = `mcp://tool/${name}`;
    for (let payments = 0; payments < MAX_PAYMENTS_PER_CALL; payments++) {
      let attempt;
      try {
        attempt = await options.payer.pay(required, surface);
      } catch (error) {
        if (error instanceof CapExceeded) return toolError(capMessage(error.refusal, options.budget.now()));
        if (error instanceof PayeeRefused) return toolError(`x402-ai mcp: ${error.message}`);
        throw error;
      }
      let result: CallToolResult;
      for (let pending = 0; ; pending++) {
        try {
          result = (await gateway.callTool({ name, arguments: input, _meta: { [PAYMENT_META]: attempt.payload } })) as CallToolResult;
        } catch (error) {
          await attempt.failed(false);
          throw error;
        }
        const code = (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
        if ((code !== 'settlement_pending' && code !== 'payment_in_progress') || pending >= PENDING_RETRIES) break;
        await sleep(1000);
      }
      const receipt = result._meta?.[PAYMENT_RESPONSE_META] as Receipt | undefined;
      if (result.isError !== true && receipt?.success) {
        const structured = result.structuredContent as { result?: { model?: unknown }; usage?: { promptTokens?: number; completionTokens?: number } } | undefined;
        const model = typeof structured?.result?.model === 'string' ? structured.result.model : typeof args.model === 'string' ? args.model : undefined;
        const usage = { ...(structured?.usage?.promptTokens === undefined ? {} : { promptTokens: structured.usage.promptTokens }), ...(structured?.usage?.completionTokens === undefined ? {} : { completionTokens: structured.usage.completionTokens }) };
        const charged = await attempt.delivered(receipt, { ...usage, ...(model ? { model } : {}) });
        options.onPaidCall?.({ surface, model, ...usage, charged, scheme: attempt.scheme, total: options.budget.state.total });
        return result;
      }
      const again = paymentRequiredOf(result);
      if (!again) {
        // the work failed: the host gets the gateway's error; the hold goes only if the gateway says nothing was charged
        // (work that failed after a settled payment says otherwise)
        await attempt.failed(JSON.stringify(result.content ?? []).includes(NOTHING_CHARGED));
        return result;
      }
      if (!(await attempt.refused(again))) return toolError(`x402-ai mcp: the gateway refused the payment (${again.error ?? 'no reason given'}); nothing was charged`);
      required = again;
    }
    return toolError(`x402-ai mcp: the gateway kept refusing the payment (last: ${required.error ?? 'no reason given'}); nothing was charged`);
  }

  const transport = new StdioServerTransport(options.stdin, options.stdout);
  await server.connect(transport);
  return {
    async close() {
      await server.close();
      await gateway.close();
    },
  };
}

/** The tool as the host sees it: the bridge names the network, so the host is not asked for one. */
function withoutNetwork(tool: Tool): Tool {
  const schema = tool.inputSchema;
  if (!schema.properties || !('network' in schema.properties)) return tool;
  const { network: _network, ...properties } = schema.properties;
  const required = schema.required?.filter((name) => name !== 'network');
  return { ...tool, inputSchema: { ...schema, properties, ...(required ? { required } : {}) } };
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}
