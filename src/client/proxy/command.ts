// The commands `x402-ai proxy`, `x402-ai proxy --refund`, `x402-ai mcp` and `x402-ai spend`: options read and
// checked, the paying buyer built, the server started with what to paste into each client, and on exit (with
// --refund-on-exit) the payment channels refunded.
import { NETWORKS } from '../../x402/networks.ts';
import { formatUsdc } from '../usdc.ts';
import { buyerKey } from '../buyer-key.ts';
import { accountOf, accountText, callLine } from './account.ts';
import type { Caps } from './caps.ts';
import { gatewayChatModels } from './chat-models.ts';
import { gatewayAt } from './forward.ts';
import { capsOf, payingOptions, portOf, type ProxyValues } from './options.ts';
import { payingBuyer, type PayingBuyer } from './paying-buyer.ts';
import { startProxyServer, type PaidCallFacts } from './proxy-server.ts';
import { defaultSpendFile, SpendLog } from './spend-log.ts';
import { SpendState } from './spend-state.ts';
import { startMcpBridge } from './mcp-bridge.ts';

type Values = ProxyValues & {
  /** the CLI's --model: for the proxy, the chat model a request naming one the gateway does not sell is sent as */
  model?: string;
  'key-file'?: string;
  'rpc-url'?: string;
  json?: boolean;
};

export interface CommandContext {
  values: Values;
  /** the gateway: --gateway, else --url, else X402_AI_URL, else the local default */
  gateway: string;
  network: string;
}

async function buyer(context: CommandContext, owner: 'proxy' | 'mcp'): Promise<PayingBuyer> {
  const options = payingOptions(context.values, context.network);
  const key = buyerKey(NETWORKS[options.network].family, context.values['key-file']);
  return payingBuyer({
    gateway: context.gateway,
    ...options,
    ...key,
    ...(context.values['rpc-url'] ? { rpcUrl: context.values['rpc-url'] } : {}),
    spendFile: context.values['spend-file'] ?? defaultSpendFile(),
    owner,
  });
}

/** The caps in the spend file for `x402-ai spend`, beside the account. */
function recordCaps(paying: PayingBuyer): void {
  const caps = paying.budget.caps;
  paying.budget.record({
    kind: 'caps',
    at: paying.budget.now(),
    ...(caps.perCall === undefined ? {} : { perCall: caps.perCall.toString() }),
    ...(caps.total === undefined ? {} : { total: caps.total.toString() }),
    ...(caps.perHour === undefined ? {} : { perHour: caps.perHour.toString() }),
    ...(caps.perDay === undefined ? {} : { perDay: caps.perDay.toString() }),
  });
}

function capsLine(caps: Caps): string {
  const parts = [
    caps.perCall === undefined ? undefined : `--max-per-call ${formatUsdc(caps.perCall)}`,
    caps.total === undefined ? undefined : `--max-total ${formatUsdc(caps.total)}`,
    caps.perHour === undefined ? undefined : `--max-per-hour ${formatUsdc(caps.perHour)}`,
    caps.perDay === undefined ? undefined : `--max-per-day ${formatUsdc(caps.perDay)}`,
  ].filter(Boolean);
  const advice = caps.total === undefined && caps.perDay === undefined ? ' (no total or daily cap: consider --max-total or --max-per-day)' : '';
  return `caps (USDC): ${parts.join(', ')}${advice}`;
}

/** What to paste into each client to pay through the proxy at `url`. */
export function pasteLines(url: string, model: string): string {
  return [
    'Claude Code:',
    `  ANTHROPIC_BASE_URL=${url} ANTHROPIC_API_KEY=x402 ANTHROPIC_MODEL=${model} ANTHROPIC_SMALL_FAST_MODEL=${model} claude`,
    'Codex (in $CODEX_HOME/config.toml, by default ~/.codex/config.toml):',
    `  model = "${model}"`,
    '  model_provider = "x402"',
    '  [model_providers.x402]',
    '  name = "x402-ai proxy"',
    `  base_url = "${url}/v1"`,
    '  wire_api = "responses"',
    'openai SDK (and aider, Continue, Cursor: any OpenAI-compatible client):',
    `  OPENAI_BASE_URL=${url}/v1 OPENAI_API_BASE=${url}/v1 OPENAI_API_KEY=x402`,
    `  new OpenAI({ baseURL: '${url}/v1', apiKey: 'x402' })`,
  ].join('\n');
}

/** Refunds the channels, a line per channel refunded; returns the failures' text ('' when none). */
async function refund(paying: PayingBuyer): Promise<string> {
  const { refunds, failures } = await paying.refund();
  for (const refunded of refunds) console.log(`refunded ${formatUsdc(refunded.amount)} USDC from channel ${refunded.channel}, tx ${refunded.transaction}`);
  if (refunds.length === 0 && failures.length === 0) console.log('no payment channel holds unspent money: nothing to refund');
  return failures.join('\n');
}

export async function runProxy(context: CommandContext): Promise<void> {
  const port = portOf(context.values);
  const paying = await buyer(context, 'proxy');
  if (context.values.refund) {
    const failures = await refund(paying);
    console.log(accountText(accountOf(paying.budget.refresh(), paying.budget.caps, paying.budget.now())));
    paying.close();
    if (failures) throw new Error(`some channels were not refunded:\n${failures}`);
    return;
  }
  recordCaps(paying);
  const gateway = gatewayAt(context.gateway);
  const models = await gatewayChatModels(context.gateway, context.values.model);
  const server = await startProxyServer({
    gateway,
    network: context.network,
    payer: paying.payer,
    budget: paying.budget,
    port,
    models,
    onPaidCall: context.values.quiet ? undefined : (call: PaidCallFacts) => console.log(callLine(call)),
    onRequest: context.values.verbose ? (line) => console.error(line) : undefined,
    describe: () => ({ gateway: context.gateway, network: context.network, payer: paying.address }),
  });
  const spent = paying.budget.state.total;
  console.log(
    [
      `x402-ai proxy listening on ${server.url}: paying ${context.gateway} on ${context.network} as ${paying.address}`,
      `${capsLine(paying.budget.caps)}; spent so far ${formatUsdc(spent)} USDC (spend file ${paying.budget.log.path})`,
      `paying by ${context.values.scheme ? `${context.values.scheme} only` : 'payment channel vouchers first, then upto, then exact'}; account: GET ${server.url}/stats`,
      models.fallback ? `a chat request naming a model the gateway does not sell is sent as ${models.fallback} (--model to choose)` : '',
      '',
      pasteLines(server.url, models.fallback ?? '<model>'),
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    gateway.close();
    if (context.values['refund-on-exit']) {
      const failures = await refund(paying).catch((error: unknown) => (error as Error).message);
      if (failures) console.error(`x402-ai proxy: refund failed: ${failures}`);
    }
    await paying.settleUnknown();
    console.log(accountText(server.account()));
    paying.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

export async function runMcp(context: CommandContext): Promise<void> {
  const paying = await buyer(context, 'mcp');
  recordCaps(paying);
  const bridge = await startMcpBridge({
    gateway: context.gateway,
    network: context.network,
    payer: paying.payer,
    budget: paying.budget,
    onPaidCall: context.values.quiet ? undefined : (call) => console.error(callLine(call)),
  });
  const stop = async () => {
    await bridge.close().catch(() => undefined);
    await paying.settleUnknown();
    paying.close();
    process.exit(0);
  };
  process.stdin.once('end', () => void stop());
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

export async function runSpend(context: CommandContext): Promise<void> {
  const log = new SpendLog(context.values['spend-file'] ?? defaultSpendFile());
  const state = new SpendState();
  log.catchUp((record) => state.apply(record));
  log.close();
  // the caps given here, else those the last proxy ran with
  const given = capsOf(context.values, false);
  const kept = state.caps;
  const caps: Caps =
    Object.keys(given).length > 0 || !kept
      ? given
      : Object.fromEntries(Object.entries({ perCall: kept.perCall, total: kept.total, perHour: kept.perHour, perDay: kept.perDay }).filter(([, v]) => v !== undefined).map(([k, v]) => [k, BigInt(v!)]));
  const account = accountOf(state, caps, Date.now());
  console.log(context.values.json ? JSON.stringify(account, null, 2) : accountText(account));
}
