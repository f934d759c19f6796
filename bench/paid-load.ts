// Paid requests end to end against a running gateway on its sandbox chain, as bench/run.ts measures its
// paid row: buyers funded by the faucet, one EIP-3009 proof per request pre-signed (not timed) the way
// x402-fetch signs (bench/sign.ts), then the fixed list sent `concurrency` at a time (bench/load.ts).
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { fixedLoad, jsonRequest, newAgent, send, stats, type LatencyStats, type RequestSpec } from './load.ts';
import { paidHeaders, signProof, type PaymentRequired } from './sign.ts';

export const PAID_IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' } };
const NETWORK = { 'X-Network': 'base' };

export interface PaidRun {
  requests: number;
  concurrency: number;
  /** answered 200 with a successful settlement receipt */
  settled: number;
  seconds: number;
  /** settled requests per second */
  rps: number;
  latency: LatencyStats;
  statuses: Record<string, number>;
  serverCpuPct: number | null;
}

async function post(origin: URL, path: string, body: unknown, headers: Record<string, string> = {}) {
  const agent = newAgent(1);
  try {
    return await send(agent, origin, jsonRequest(path, body, headers));
  } finally {
    agent.destroy();
  }
}

async function fundedBuyer(origin: URL): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  const reply = await post(origin, '/sandbox/faucet', { network: 'base', address: account.address });
  if (reply.status !== 200) throw new Error(`faucet answered ${reply.status}: ${reply.body.toString()}`);
  return account;
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
  options: { requests: number; concurrency: number; serverPid?: number; call?: { path: string; body: unknown } },
): Promise<PaidRun> {
  const { path, body } = options.call ?? PAID_IMAGE;
  // a buyer per connection, so no two requests in flight share a payer
  const buyers = await Promise.all(Array.from({ length: options.concurrency }, () => fundedBuyer(origin)));
  const quote = JSON.parse((await post(origin, path, body, NETWORK)).body.toString()) as PaymentRequired;
  const specs: RequestSpec[] = [];
  for (let i = 0; i < options.requests; i++) {
    const proof = await signProof(buyers[i % buyers.length]!, quote);
    specs.push(jsonRequest(path, body, { ...NETWORK, ...paidHeaders(proof) }));
  }
  const run = await fixedLoad(origin, specs, options.concurrency, options.serverPid);
  const statuses: Record<string, number> = {};
  for (const reply of run.replies) statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
  const settled = run.replies.filter((reply) => reply.status === 200 && settledReceipt(reply.headers));
  return {
    requests: options.requests,
    concurrency: options.concurrency,
    settled: settled.length,
    seconds: run.seconds,
    rps: settled.length / run.seconds,
    latency: stats(settled.map((reply) => reply.ms)),
    statuses,
    serverCpuPct: run.serverCpuPct,
  };
}
