// Paid requests end to end against a running gateway on its sandbox chain, as bench/run.ts measures its
// paid rows: buyers funded by the faucet, one proof per request pre-signed (not timed) the way the official
// clients sign (bench/payers.ts: EIP-3009 on base by default, or a Solana transfer), then the fixed list sent
// `concurrency` at a time (bench/load.ts). Proofs that expire soon (Solana's blockhash) are signed in batches,
// each sent before the next is signed; only the sending is timed.
import { fixedLoad, jsonRequest, postOnce, stats, type LatencyStats, type Reply, type RequestSpec } from './load.ts';
import { paidHeaders, type PaymentRequired } from './sign.ts';
import { evmPayer, type Payer } from './payers.ts';

export const PAID_IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' } };

export interface PaidRun {
  requests: number;
  concurrency: number;
  /** answered 200 with a successful settlement receipt */
  settled: number;
  seconds: number;
  /** settled requests per second */
  rps: number;
  latency: LatencyStats;
  /** each settled request's latency, ms (to merge runs) */
  settledMs: number[];
  statuses: Record<string, number>;
  serverCpuPct: number | null;
  network: string;
  /** this load generator's CPU over the sending, in % of one core */
  clientCpuPct: number;
  /** signing time per proof (not in `seconds`) */
  signMsPerProof: number;
}

function settledReceipt(headers: Record<string, string | string[] | undefined>): boolean {
  const header = headers['x-payment-response'];
  if (typeof header !== 'string') return false;
  try {
    return (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { success?: boolean }).success === true;
  } catch {
    return false;
  }
}

export async function paidThroughput(
  origin: URL,
  options: { requests: number; concurrency: number; serverPid?: number; call?: { path: string; body: unknown }; payer?: Payer },
): Promise<PaidRun> {
  const { path, body } = options.call ?? PAID_IMAGE;
  const payer = options.payer ?? evmPayer();
  const network = { 'X-Network': payer.network };
  // a buyer per connection, so no two requests in flight share a payer
  const buyers = await Promise.all(Array.from({ length: options.concurrency }, () => payer.buyer(origin)));
  const quote = JSON.parse((await postOnce(origin, path, body, network)).body.toString()) as PaymentRequired;
  const replies: Reply[] = [];
  let seconds = 0;
  let signMs = 0;
  let clientCpuSeconds = 0;
  let serverCpuSeconds: number | null = 0;
  for (let start = 0; start < options.requests; start += payer.signAhead) {
    const signStarted = performance.now();
    const specs: RequestSpec[] = [];
    for (let i = start; i < Math.min(options.requests, start + payer.signAhead); i++) {
      const proof = await buyers[i % buyers.length]!(quote);
      specs.push(jsonRequest(path, body, { ...network, ...paidHeaders(proof) }));
    }
    signMs += performance.now() - signStarted;
    const run = await fixedLoad(origin, specs, options.concurrency, options.serverPid);
    replies.push(...run.replies);
    seconds += run.seconds;
    clientCpuSeconds += (run.clientCpuPct / 100) * run.seconds;
    serverCpuSeconds = run.serverCpuPct === null || serverCpuSeconds === null ? null : serverCpuSeconds + (run.serverCpuPct / 100) * run.seconds;
  }
  const statuses: Record<string, number> = {};
  for (const reply of replies) statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
  const settled = replies.filter((reply) => reply.status === 200 && settledReceipt(reply.headers));
  return {
    requests: options.requests,
    concurrency: options.concurrency,
    settled: settled.length,
    seconds,
    rps: settled.length / seconds,
    latency: stats(settled.map((reply) => reply.ms)),
    settledMs: settled.map((reply) => reply.ms),
    statuses,
    serverCpuPct: serverCpuSeconds === null ? null : (serverCpuSeconds / seconds) * 100,
    network: payer.network,
    clientCpuPct: (clientCpuSeconds / seconds) * 100,
    signMsPerProof: signMs / options.requests,
  };
}
