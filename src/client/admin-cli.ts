#!/usr/bin/env node
// x402-ai-admin: the operator's view of a gateway's payments ledger, over its admin API (/api/v1/admin/*).
// The admin token comes from the environment (X402_ADMIN_TOKEN, or ADMIN_TOKEN) or a file (--token-file),
// never from arguments, and is never printed.
import { GatewayError } from './errors.ts';
import { gatewayUrl, parseCommandLine, readSecretFile, runCommand, UsageError } from './command-line.ts';
import { formatUsdc } from './usdc.ts';
import { formatTable } from './text-table.ts';
import { explainingFetch } from './reach.ts';

const USAGE = `usage: x402-ai-admin <command> [options]
  payments   payments, newest first  [--state s] [--network n] [--model m] [--payer addr]
                                     [--from date] [--to date] [--limit k] [--cursor c]
  revenue    settled revenue per UTC day, network and model  [--from date] [--to date]
dates:   YYYY-MM-DD (UTC; --to includes that day) or an ISO 8601 date-time
options: --url (X402_AI_URL, default http://127.0.0.1:4021)  --json  --token-file path
token:   X402_ADMIN_TOKEN (or ADMIN_TOKEN) in the environment, or --token-file with the token inside`;

const { values, positionals } = parseCommandLine('x402-ai-admin', {
  url: { type: 'string' },
  json: { type: 'boolean', default: false },
  'token-file': { type: 'string' },
  state: { type: 'string' },
  network: { type: 'string' },
  model: { type: 'string' },
  payer: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
});


function adminToken(): string {
  const token = values['token-file'] ? readSecretFile(values['token-file'], 'the admin token') : process.env.X402_ADMIN_TOKEN || process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError('no admin token: set X402_ADMIN_TOKEN (or ADMIN_TOKEN), or pass --token-file');
  // a header carries printable characters only; said before fetch would refuse it quoting the value
  if (!/^[\x21-\x7e]+$/.test(token)) throw new UsageError('the admin token holds a space, a line break or another character a header cannot carry');
  return token;
}

/** GET an admin path with the given query options (only those set); a non-2xx answer is a GatewayError. */
async function get(path: string, options: Record<string, string | undefined>): Promise<Record<string, unknown>> {
  const query = new URLSearchParams(Object.entries(options).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const response = await explainingFetch(fetch)(`${gatewayUrl(values.url)}/api/v1/admin/${path}${query.size > 0 ? `?${query}` : ''}`, {
    headers: { Authorization: `Bearer ${adminToken()}` },
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: reported as text
  }
  if (!response.ok) throw new GatewayError(response.status, body);
  return body as Record<string, unknown>;
}

const usdc = (atomic: string) => formatUsdc(BigInt(atomic));
const when = (iso: string) => iso.slice(0, 19).replace('T', ' ');

interface Payment {
  createdAt: string;
  state: string;
  network: string;
  model: string;
  amount: string;
  payer: string;
  transaction: string | null;
}

interface Revenue {
  rows: { day: string; network: string; model: string; count: number; amount: string }[];
  totals: { network: string; count: number; amount: string }[];
}

async function payments(): Promise<void> {
  const { state, network, model, payer, from, to, limit, cursor } = values;
  const page = await get('payments', { state, network, model, payer, from, to, limit, cursor });
  if (values.json) return console.log(JSON.stringify(page, null, 2));
  const rows = (page.payments as Payment[]).map((p) => [
    when(p.createdAt),
    p.state,
    p.network,
    p.model || '-',
    usdc(p.amount),
    p.payer || '-',
    p.transaction ?? '-',
  ]);
  const header = ['created (UTC)', 'state', 'network', 'model', 'USDC', 'payer', 'transaction'];
  console.log(rows.length > 0 ? formatTable(header, rows, ['left', 'left', 'left', 'left', 'right']) : 'no payments');
  if (page.nextCursor) console.log(`more: --cursor ${String(page.nextCursor)}`);
}

async function revenue(): Promise<void> {
  const body = (await get('revenue', { from: values.from, to: values.to })) as unknown as Revenue;
  if (values.json) return console.log(JSON.stringify(body, null, 2));
  if (body.rows.length === 0) return console.log('no settled payments');
  const rows = [
    ...body.rows.map((r) => [r.day, r.network, r.model || '-', String(r.count), usdc(r.amount)]),
    ...body.totals.map((t) => ['total', t.network, '', String(t.count), usdc(t.amount)]),
  ];
  console.log(formatTable(['day (UTC)', 'network', 'model', 'count', 'USDC'], rows, ['left', 'left', 'left', 'right', 'right']));
}

async function run(): Promise<void> {
  const [command, extra] = positionals;
  if (values.help || !command) return console.log(USAGE);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  if (command === 'payments') return payments();
  if (command === 'revenue') {
    const stray = (['state', 'network', 'model', 'payer', 'limit', 'cursor'] as const).find((name) => values[name] !== undefined);
    if (stray) throw new UsageError(`--${stray} is an option of payments, not revenue`);
    return revenue();
  }
  throw new UsageError(`unknown command "${command}"`);
}

runCommand('x402-ai-admin', run);
