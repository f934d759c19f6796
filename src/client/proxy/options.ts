// The command-line options of `x402-ai proxy`, `x402-ai mcp` and `x402-ai spend` (parsed with the CLI's others),
// read into what the paying processes take. Every mistake is a usage error before anything starts.
import { parseUsdc } from '../usdc.ts';
import { UsageError } from '../command-line.ts';
import { NETWORK_NAMES, type NetworkName } from '../../x402/networks.ts';
import type { Caps } from './caps.ts';
import { SCHEME_FLAGS, type SchemeName } from './payment-policy.ts';

export const PROXY_OPTIONS = {
  gateway: { type: 'string' },
  port: { type: 'string' },
  'max-per-call': { type: 'string' },
  'max-total': { type: 'string' },
  'max-per-hour': { type: 'string' },
  'max-per-day': { type: 'string' },
  scheme: { type: 'string' },
  'pay-to': { type: 'string' },
  channels: { type: 'string' },
  deposit: { type: 'string' },
  refund: { type: 'boolean', default: false },
  'refund-on-exit': { type: 'boolean', default: false },
  'spend-file': { type: 'string' },
  quiet: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
} as const;

export const PROXY_USAGE = `  proxy             [--port 8402] [--gateway url] [caps] [--scheme channel|upto|exact] [--pay-to address]
                    [--model id] [--channels 4] [--deposit USDC] [--refund-on-exit] [--spend-file path] [--quiet]
                    [--verbose]
                    a paying proxy on 127.0.0.1 for any OpenAI or Anthropic client (Claude Code, Codex, the SDKs):
                    it prints the lines to paste; GET /stats is the account. A chat request naming a model the
                    gateway does not sell (an agent's default) is sent as --model (default: its first chat model).
                    docs/proxy.md
  proxy --refund    return what the payment channels hold unspent to the wallet, then exit
  mcp               [--gateway url] [caps] [...]  a stdio MCP server: the gateway's tools, paid under the caps
  spend             [--json] [--spend-file path]  the account: spent, calls, per model and scheme, caps left
caps (USDC):        --max-per-call (default 1)  --max-total  --max-per-hour  --max-per-day; kept across restarts
                    in the spend file (default: ~/.config/x402-ai/spend.jsonl)`;

/** what the paying processes take from the command line */
export interface PayingOptions {
  network: NetworkName;
  caps: Caps;
  scheme?: SchemeName;
  payTo?: string;
  channels: number;
  deposit?: bigint;
}

/** the options as parsed: strings, and booleans for the flags */
export type ProxyValues = { [K in keyof typeof PROXY_OPTIONS]?: (typeof PROXY_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const DEFAULT_PER_CALL = 1_000_000n;

function usdc(name: string, text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  try {
    return parseUsdc(text);
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
}

function whole(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return Number(text);
}

/** The caps as given; an unset --max-per-call is 1 USDC (a single call above it is refused). */
export function capsOf(values: ProxyValues, defaults = true): Caps {
  const caps: Caps = {};
  const perCall = usdc('max-per-call', values['max-per-call']) ?? (defaults ? DEFAULT_PER_CALL : undefined);
  const total = usdc('max-total', values['max-total']);
  const perHour = usdc('max-per-hour', values['max-per-hour']);
  const perDay = usdc('max-per-day', values['max-per-day']);
  if (perCall !== undefined) caps.perCall = perCall;
  if (total !== undefined) caps.total = total;
  if (perHour !== undefined) caps.perHour = perHour;
  if (perDay !== undefined) caps.perDay = perDay;
  return caps;
}

/** --pay-to: the only payee paid, an EVM or Solana address; undefined when not given */
export function payToOption(values: Pick<ProxyValues, 'pay-to'>): string | undefined {
  const payTo = values['pay-to'];
  if (payTo !== undefined && !/^(0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/.test(payTo)) throw new UsageError(`--pay-to ${payTo} is not an EVM or Solana address`);
  return payTo;
}

export function payingOptions(values: ProxyValues, network: string): PayingOptions {
  if (!(NETWORK_NAMES as readonly string[]).includes(network)) throw new UsageError(`unknown network "${network}": use one of ${NETWORK_NAMES.join(', ')}`);
  const scheme = values.scheme === undefined ? undefined : SCHEME_FLAGS[values.scheme];
  if (values.scheme !== undefined && !scheme) throw new UsageError(`--scheme ${values.scheme}: use channel, upto or exact`);
  const payTo = payToOption(values);
  const deposit = usdc('deposit', values.deposit);
  return {
    network: network as NetworkName,
    caps: capsOf(values),
    ...(scheme ? { scheme } : {}),
    ...(payTo ? { payTo } : {}),
    channels: whole('channels', values.channels, 4, 64),
    ...(deposit === undefined ? {} : { deposit }),
  };
}

export function portOf(values: ProxyValues): number {
  if (values.port === undefined) return 8402;
  if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) throw new UsageError('--port must be a port number (0 picks a free one)');
  return Number(values.port);
}
