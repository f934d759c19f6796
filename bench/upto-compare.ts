// The same short chat (a large max_tokens, a short answer) paid under `exact` and under `upto` in the same run,
// calls taking turns (the order reversed every other call), one call at a time, against a running gateway on its
// sandbox base chain. Each side pays with the official client (@x402/fetch 2.x with @x402/evm's exact or upto
// client scheme) from its own fresh buyer; the first call of each is a warm-up, not counted (the model's first
// load; upto's one-time Permit2 approval through gas sponsoring).
//   cost: what each call was charged, from PAYMENT-RESPONSE.amount, checked equal to X-Payment-Amount, and the
//         buyer's balance read on-chain before and after, checked to have moved by their sum;
//   paid latency: from sending the request that carries PAYMENT-SIGNATURE to the last byte of its answer
//         (verification, generation, settlement); beside it the whole call as the client sees it (the 402 round
//         trip and signing included); and of it, the facilitator's mean verify and settle time per scheme, from
//         the gateway's own /metrics histograms (their sums and counts over the counted calls).
import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { stats, type LatencyStats } from './load.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';

const BASE = NETWORKS.base as EvmNetwork;
export const SHORT_CHAT = {
  path: '/api/v1/ai/chat',
  body: { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 512, options: { seed: 7 } },
} as const;

export type SchemeName = 'exact' | 'upto';

export interface SchemeSide {
  scheme: SchemeName;
  calls: number;
  /** atomic units, per call */
  charged: { min: string; p50: string; max: string; total: string };
  /** the buyer's USDC balance read on-chain before and after the counted calls */
  movedOnChain: string;
  completionTokensP50: number;
  paid: LatencyStats;
  whole: LatencyStats;
  /** the facilitator's mean time per call (ms), from the gateway's /metrics */
  facilitatorMeanMs: { verify: number; settle: number };
}

export interface ExactUptoComparison {
  call: typeof SHORT_CHAT;
  /** the quote: what exact charges, what upto may charge at most */
  ceiling: string;
  exact: SchemeSide;
  upto: SchemeSide;
}

interface Sample {
  charged: bigint;
  completionTokens: number;
  paidMs: number;
  wholeMs: number;
}

async function post(origin: URL, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(path, origin), { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

type Histograms = Map<string, number>;

/** The sums and counts of the facilitator's verify and settle histograms on base, by scheme. */
async function facilitatorHistograms(origin: URL): Promise<Histograms> {
  const text = await (await fetch(new URL('/metrics', origin))).text();
  const values: Histograms = new Map();
  const line = /^x402_payment_(verify|settle)_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/gm;
  for (const [, step, kind, labels, value] of text.matchAll(line)) {
    const scheme = /scheme="([^"]+)"/.exec(labels!)?.[1];
    if (!labels!.includes('network="base"')) continue;
    const key = `${step}:${kind}:${scheme}`;
    values.set(key, (values.get(key) ?? 0) + Number(value));
  }
  return values;
}

function meanMs(before: Histograms, after: Histograms, step: 'verify' | 'settle', scheme: SchemeName): number {
  const delta = (kind: string) => (after.get(`${step}:${kind}:${scheme}`) ?? 0) - (before.get(`${step}:${kind}:${scheme}`) ?? 0);
  return (delta('sum') / delta('count')) * 1000;
}

async function sandboxRpcUrl(origin: URL): Promise<string> {
  const health = (await (await fetch(new URL('/healthz', origin))).json()) as { sandboxNetworks?: Record<string, { rpcUrl?: string }> };
  const url = health.sandboxNetworks?.base?.rpcUrl;
  if (!url) throw new Error('the gateway runs no sandbox base chain');
  return url;
}

async function fundedBuyer(origin: URL): Promise<PrivateKeyAccount> {
  const buyer = privateKeyToAccount(generatePrivateKey());
  const funded = await post(origin, '/sandbox/faucet', { network: 'base', address: buyer.address, amount: '100000000' });
  if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}: ${await funded.text()}`);
  return buyer;
}

function clientFor(scheme: SchemeName, buyer: PrivateKeyAccount, rpcUrl: string): x402Client {
  if (scheme === 'exact') return registerExactEvmScheme(new x402Client(), { signer: buyer });
  const signer = toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl) }));
  return new x402Client().register(BASE.caip2 as `${string}:${string}`, new UptoEvmScheme(signer, { rpcUrl }));
}

/** One payer: the official client, with the moment its paid request left noted. */
function payer(scheme: SchemeName, buyer: PrivateKeyAccount, rpcUrl: string, origin: URL) {
  let paidSentAt = NaN;
  const noting: typeof fetch = (input, init) => {
    const headers = init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined);
    if (new Headers(headers).has('PAYMENT-SIGNATURE')) paidSentAt = performance.now();
    return fetch(input, init);
  };
  const pay = wrapFetchWithPayment(noting, clientFor(scheme, buyer, rpcUrl));
  return async (): Promise<Sample> => {
    const started = performance.now();
    const response = await pay(new URL(SHORT_CHAT.path, origin), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
      body: JSON.stringify(SHORT_CHAT.body),
    });
    const text = await response.text();
    const ended = performance.now();
    if (response.status !== 200) throw new Error(`${scheme}: ${response.status} ${text.slice(0, 300)}`);
    const receipt = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
    const charged = BigInt(receipt.amount ?? 'NaN');
    if (!receipt.success || response.headers.get('X-Payment-Amount') !== charged.toString()) {
      throw new Error(`${scheme}: receipt ${JSON.stringify(receipt)} and X-Payment-Amount ${response.headers.get('X-Payment-Amount')} disagree`);
    }
    return { charged, completionTokens: Number(response.headers.get('X-Usage-Completion-Tokens')), paidMs: ended - paidSentAt, wholeMs: ended - started };
  };
}

export async function compareExactAndUpto(origin: URL, options: { calls: number }): Promise<ExactUptoComparison> {
  const rpcUrl = await sandboxRpcUrl(origin);
  const quote = await post(origin, SHORT_CHAT.path, SHORT_CHAT.body, { 'X-Network': 'base' });
  const required = JSON.parse(Buffer.from(quote.headers.get('PAYMENT-REQUIRED') ?? '', 'base64').toString('utf8')) as {
    accepts: { scheme: string; amount: string; asset: Address }[];
  };
  await quote.arrayBuffer();
  const upto = required.accepts.find((a) => a.scheme === 'upto');
  if (!upto) throw new Error('the gateway offers no upto for chat on base');
  const chain = createPublicClient({ transport: http(rpcUrl) });
  const balance = (address: Address) => chain.readContract({ address: upto.asset, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

  const schemes: SchemeName[] = ['exact', 'upto'];
  const sides = await Promise.all(
    schemes.map(async (scheme) => {
      const buyer = await fundedBuyer(origin);
      return { scheme, buyer, pay: payer(scheme, buyer, rpcUrl, origin), samples: [] as Sample[], before: 0n };
    }),
  );
  for (const side of sides) {
    await side.pay(); // warm-up, not counted
    side.before = await balance(side.buyer.address);
  }
  const metricsBefore = await facilitatorHistograms(origin);
  for (let i = 0; i < options.calls; i++) {
    for (const side of i % 2 ? [...sides].reverse() : sides) side.samples.push(await side.pay());
  }
  const metricsAfter = await facilitatorHistograms(origin);
  const summary = async (side: (typeof sides)[number]): Promise<SchemeSide> => {
    const charges = side.samples.map((s) => s.charged).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const total = charges.reduce((sum, c) => sum + c, 0n);
    const moved = side.before - (await balance(side.buyer.address));
    if (moved !== total) throw new Error(`${side.scheme}: the buyer's balance moved ${moved}, the receipts say ${total}`);
    const tokens = side.samples.map((s) => s.completionTokens).sort((a, b) => a - b);
    return {
      scheme: side.scheme,
      calls: side.samples.length,
      charged: { min: String(charges[0]), p50: String(charges[Math.floor(charges.length / 2)]), max: String(charges.at(-1)), total: total.toString() },
      movedOnChain: moved.toString(),
      completionTokensP50: tokens[Math.floor(tokens.length / 2)]!,
      paid: stats(side.samples.map((s) => s.paidMs)),
      whole: stats(side.samples.map((s) => s.wholeMs)),
      facilitatorMeanMs: {
        verify: meanMs(metricsBefore, metricsAfter, 'verify', side.scheme),
        settle: meanMs(metricsBefore, metricsAfter, 'settle', side.scheme),
      },
    };
  };
  return { call: SHORT_CHAT, ceiling: upto.amount, exact: await summary(sides[0]!), upto: await summary(sides[1]!) };
}

export function formatExactUpto(result: ExactUptoComparison): string[] {
  const f = (value: number) => value.toFixed(1);
  const { exact, upto } = result;
  const rows: [string, (side: SchemeSide) => string][] = [
    ['charged per call (atomic units, p50)', (s) => s.charged.p50],
    ['  min .. max', (s) => `${s.charged.min} .. ${s.charged.max}`],
    ['  moved on-chain, all calls = receipts', (s) => s.movedOnChain],
    ['completion tokens (p50)', (s) => String(s.completionTokensP50)],
    ['paid request p50 / p99 ms', (s) => `${f(s.paid.p50)} / ${f(s.paid.p99)}`],
    ['whole call (402 + sign + paid) p50 / p99 ms', (s) => `${f(s.whole.p50)} / ${f(s.whole.p99)}`],
    ['  of the paid request: verify / settle mean ms', (s) => `${f(s.facilitatorMeanMs.verify)} / ${f(s.facilitatorMeanMs.settle)}`],
  ];
  const width = 46;
  return [
    `(h) the same short chat under exact and under upto, same run, ${exact.calls} calls each, taking turns, one at a time`,
    `    ${JSON.stringify(result.call.body)} on base; ceiling (the exact price, upto's maximum) ${result.ceiling}; official @x402/fetch clients`,
    `    ${'scheme'.padEnd(width)}${'exact'.padStart(16)}${'upto'.padStart(16)}`,
    ...rows.map(([label, value]) => `    ${label.padEnd(width)}${value(exact).padStart(16)}${value(upto).padStart(16)}`),
    `    upto charges ${((Number(upto.charged.p50) / Number(exact.charged.p50)) * 100).toFixed(1)}% of exact; its paid request takes ` +
      `${f(Math.abs(upto.paid.p50 - exact.paid.p50))} ms ${upto.paid.p50 >= exact.paid.p50 ? 'more' : 'less'} at p50 ` +
      `(upto settles a Permit2 transfer through the upto proxy, exact an EIP-3009 transfer)`,
  ];
}
