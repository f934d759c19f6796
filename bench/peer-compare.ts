// The gateway beside the official x402 stack (bench/official-peer.ts: @x402/hono + the in-process @x402/core +
// @x402/evm facilitator) on the gateway's own sandbox anvil and token, same image, same price:
//   paid: `requests` paid image calls per side at `concurrency` in flight, each with its own proof signed by the
//         official client code (the gateway's v1 X-PAYMENT as x402-fetch 1.x signs it, the peer's v2
//         PAYMENT-SIGNATURE as @x402/fetch 2.x with @x402/evm's exact client scheme signs it), in `rounds` rounds
//         taking turns (reversed every other round) so load from other jobs weighs on both alike; proofs are
//         signed before each round (not timed). A call counts when it answered 200 with a successful settlement
//         receipt.
//   unpaid: the 402 of the same call, closed loop, alternating rounds.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { alternatingLoad, fixedLoad, jsonRequest, sendOnce, stats, type LatencyStats, type LoadResult, type Reply, type RequestSpec, type TimedLoadOptions } from './load.ts';
import { evmPayer } from './payers.ts';
import { paidHeaders, type PaymentRequired } from './sign.ts';
import type { PeerSettings, SvmPeerSettings } from './official-peer.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';

const PEER = fileURLToPath(new URL('./official-peer.ts', import.meta.url));

export interface SideResult {
  requests: number;
  settled: number;
  seconds: number;
  rps: number;
  latency: LatencyStats;
  statuses: Record<string, number>;
}

export interface PeerComparison {
  paid: { gateway: SideResult; official: SideResult; ratio: number; rounds: number; concurrency: number };
  unpaid: { gateway: LoadResult; official: LoadResult; ratio: number };
}

export interface PeerCompareOptions {
  call: { path: string; body: unknown };
  requests: number;
  concurrency: number;
  rounds: number;
  /** the unpaid 402 comparison's closed loop */
  unpaid: { connections: number; seconds: number; warmupSeconds: number };
}

export const header = (reply: Reply, name: string): string | undefined => {
  const value = reply.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

export function decodedReceipt(value: string | undefined): boolean {
  if (!value) return false;
  try {
    return (JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as { success?: boolean }).success === true;
  } catch {
    return false;
  }
}

/** Starts bench/official-peer.ts with these settings; resolves once it listens. */
export async function startPeer(settings: PeerSettings | SvmPeerSettings): Promise<{ url: URL; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [PEER], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, BENCH_PEER: JSON.stringify(settings) } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void exited.then(() => reject(new Error(`bench/official-peer.ts exited with ${child.exitCode ?? child.signalCode}`)));
  });
  return {
    url: new URL((JSON.parse(line) as { url: string }).url),
    pid: child.pid!,
    stop: async () => {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function faucet(gateway: URL, address: string): Promise<void> {
  const reply = await sendOnce(gateway, jsonRequest('/sandbox/faucet', { network: 'base', address }));
  if (reply.status !== 200) throw new Error(`faucet answered ${reply.status}: ${reply.body.toString()}`);
}

function sideResult(replies: Reply[], seconds: number, settled: (reply: Reply) => boolean): SideResult {
  const statuses: Record<string, number> = {};
  for (const reply of replies) statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
  const ok = replies.filter(settled);
  return { requests: replies.length, settled: ok.length, seconds, rps: ok.length / seconds, latency: stats(ok.map((r) => r.ms)), statuses };
}

export async function compareWithOfficial(gateway: URL, options: PeerCompareOptions): Promise<PeerComparison> {
  const { call, concurrency } = options;
  const health = JSON.parse((await sendOnce(gateway, { method: 'GET', path: '/healthz', headers: {} })).body.toString()) as {
    sandboxNetworks?: Record<string, { rpcUrl?: string }>;
  };
  const rpcUrl = health.sandboxNetworks?.base?.rpcUrl;
  if (!rpcUrl) throw new Error('the gateway runs no sandbox base chain');
  const gatewayQuoteReply = await sendOnce(gateway, jsonRequest(call.path, call.body, { 'X-Network': 'base' }));
  const gatewayQuote = JSON.parse(gatewayQuoteReply.body.toString()) as PaymentRequired;
  const accept = gatewayQuote.accepts[0] as { maxAmountRequired: string; asset: `0x${string}`; payTo: `0x${string}`; extra: { name: string; version: string } };

  // The peer settles from its own funded key on the same chain (the faucet gives native gas too).
  const settlementKey = generatePrivateKey();
  await faucet(gateway, privateKeyToAccount(settlementKey).address);
  const peer = await startPeer({
    rpcUrl,
    chainId: (NETWORKS.base as EvmNetwork).chainId,
    asset: accept.asset,
    payTo: accept.payTo,
    amount: accept.maxAmountRequired,
    eip712: { name: accept.extra.name, version: accept.extra.version },
    settlementKey,
  });
  try {
    // a buyer per connection on each side, so no two requests in flight share a payer
    const gatewayBuyers = await Promise.all(Array.from({ length: concurrency }, () => evmPayer('base').buyer(gateway)));
    const peerClients = await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const account = privateKeyToAccount(generatePrivateKey());
        await faucet(gateway, account.address);
        return new x402HTTPClient(registerExactEvmScheme(new x402Client(), { signer: account }));
      }),
    );
    const peerQuoteReply = await sendOnce(peer.url, jsonRequest(call.path, call.body));
    if (peerQuoteReply.status !== 402) throw new Error(`the official peer answered ${peerQuoteReply.status} unpaid`);
    const peerQuote = peerClients[0]!.getPaymentRequiredResponse((name) => header(peerQuoteReply, name), undefined);

    const perRound = Math.ceil(options.requests / options.rounds);
    const replies = { gateway: [] as Reply[], official: [] as Reply[] };
    const seconds = { gateway: 0, official: 0 };
    for (let round = 0; round < options.rounds; round++) {
      const gatewaySpecs: RequestSpec[] = [];
      const peerSpecs: RequestSpec[] = [];
      for (let i = 0; i < perRound; i++) {
        const proof = await gatewayBuyers[i % concurrency]!(gatewayQuote);
        gatewaySpecs.push(jsonRequest(call.path, call.body, { 'X-Network': 'base', ...paidHeaders(proof) }));
        const client = peerClients[i % concurrency]!;
        const payload = await client.createPaymentPayload(peerQuote);
        peerSpecs.push(jsonRequest(call.path, call.body, client.encodePaymentSignatureHeader(payload)));
      }
      const turns: Array<['gateway', URL, RequestSpec[]] | ['official', URL, RequestSpec[]]> = [
        ['gateway', gateway, gatewaySpecs],
        ['official', peer.url, peerSpecs],
      ];
      if (round % 2 === 1) turns.reverse();
      for (const [side, origin, specs] of turns) {
        const run = await fixedLoad(origin, specs, concurrency);
        replies[side].push(...run.replies);
        seconds[side] += run.seconds;
      }
    }
    const gatewaySide = sideResult(replies.gateway, seconds.gateway, (r) => r.status === 200 && decodedReceipt(header(r, 'X-PAYMENT-RESPONSE')));
    const officialSide = sideResult(replies.official, seconds.official, (r) => r.status === 200 && decodedReceipt(header(r, 'PAYMENT-RESPONSE')));

    const unpaidTarget = (origin: URL, headers: Record<string, string>): TimedLoadOptions => ({
      origin,
      spec: jsonRequest(call.path, call.body, headers),
      connections: options.unpaid.connections,
      seconds: options.unpaid.seconds,
      warmupSeconds: options.unpaid.warmupSeconds,
      expectStatus: 402,
    });
    const [unpaidGateway, unpaidOfficial] = (await alternatingLoad(
      [unpaidTarget(gateway, { 'X-Network': 'base' }), unpaidTarget(peer.url, {})],
      options.rounds,
    )) as [LoadResult, LoadResult];
    return {
      paid: { gateway: gatewaySide, official: officialSide, ratio: gatewaySide.rps / officialSide.rps, rounds: options.rounds, concurrency },
      unpaid: { gateway: unpaidGateway, official: unpaidOfficial, ratio: unpaidGateway.rps / unpaidOfficial.rps },
    };
  } finally {
    await peer.stop();
  }
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const statusText = (statuses: Record<string, number>) => Object.entries(statuses).map(([s, n]) => `${s}x${n}`).join(' ');

/** The comparison as the bench prints it: paid rows, the ratio with p50/p99 beside, then the unpaid 402. */
export function formatComparison(c: PeerComparison): string[] {
  const { gateway: g, official: o } = c.paid;
  const side = (name: string, s: SideResult) =>
    `  ${name.padEnd(34)}${fixed(s.rps, 1).padStart(8)} req/s  p50 ${fixed(s.latency.p50, 1).padStart(6)} ms  p99 ${fixed(s.latency.p99, 1).padStart(6)} ms  ` +
    `settled ${s.settled}/${s.requests} (${statusText(s.statuses)})`;
  const unpaid = (name: string, r: LoadResult) =>
    `  ${name.padEnd(34)}${fixed(r.rps, 0).padStart(8)} req/s  p50 ${fixed(r.p50, 2).padStart(6)} ms  p99 ${fixed(r.p99, 2).padStart(6)} ms  (${statusText(r.statuses)})`;
  return [
    `(g) paid image calls on base vs the official x402 stack (@x402/hono 2.27 + in-process @x402/core/@x402/evm facilitator),`,
    `    same sandbox anvil, ${c.paid.concurrency} in flight, ${c.paid.rounds} interleaved rounds, proofs signed by official client code:`,
    side('gateway (default logging)', g),
    side('official middleware', o),
    `  PAID RATIO gateway / official: ${fixed(c.paid.ratio, 2)}x  (p50 ${fixed(g.latency.p50, 1)} vs ${fixed(o.latency.p50, 1)} ms, p99 ${fixed(g.latency.p99, 1)} vs ${fixed(o.latency.p99, 1)} ms)`,
    `(g) unpaid 402 of the same call, closed loop:`,
    unpaid('gateway', c.unpaid.gateway),
    unpaid('official middleware', c.unpaid.official),
    `  402 RATIO gateway / official: ${fixed(c.unpaid.ratio, 2)}x`,
  ];
}
