// The unpaid 402 alone (issue 18 item 7): the gateway's answer to an image call without payment beside the
// official @x402/hono middleware's (bench/official-peer.ts), and, with BENCH_BASELINE_DIR naming another
// checkout of this repository (with node_modules), that checkout's gateway too: closed loop, BENCH_CONNECTIONS
// (50) connections, BENCH_ROUNDS (10) interleaved rounds over BENCH_SECONDS (10) per side, each gateway with its
// default logging; and the floor under them all, a bare node:http server replaying the gateway's very 402 bytes
// (bench/bare.ts: the same answer with nothing computed). Each gateway is asked twice: the same body every call, as
// a load tool sends it (after the first, the 402 it kept, src/http/paid/unpaid-quotes.ts), and a new body each call
// (a counter in the prompt), as clients with prompts of their own do: every call parsed, priced and gated. Prints
// req/s, p50, and each server's CPU per answer (from /proc: less sensitive to other jobs on the machine than req/s,
// which is what the ratio is of). BENCH_NETWORK (base) is the X-Network the gateway is asked with; empty sends none, as
// the official clients do, and the 402 lists every network. The official middleware is set up for base either way.
import { generatePrivateKey } from 'viem/accounts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayChild, startReportingChild, type GatewayChild } from './gateway-child.ts';
import { capture } from './captured-answer.ts';
import { alternatingLoad, BODY_COUNTER, jsonRequest, type LoadResult, type TimedLoadOptions } from './load.ts';
import { PAID_IMAGE } from './paid-load.ts';
import { startPeer } from './peer-compare.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { envNumber } from './env-number.ts';

const connections = envNumber('BENCH_CONNECTIONS', 50);
const seconds = envNumber('BENCH_SECONDS', 10);
const rounds = envNumber('BENCH_ROUNDS', 10);
const baselineDir = process.env.BENCH_BASELINE_DIR;
const network = process.env.BENCH_NETWORK ?? 'base';
const networkHeader: Record<string, string> = network ? { 'X-Network': network } : {};

const gateways: [string, GatewayChild][] = [['gateway', await startGatewayChild()]];
if (baselineDir) gateways.push([`gateway (${baselineDir})`, await startGatewayChild({}, join(baselineDir, 'bench/serve.ts'))]);
const [, gateway] = gateways[0]!;
const call = { path: PAID_IMAGE.path, body: { ...PAID_IMAGE.body, prompt: `${PAID_IMAGE.body.prompt} ${BODY_COUNTER}` } };
try {
  const health = (await (await fetch(new URL('/healthz', gateway.url))).json()) as { sandboxNetworks: { base: { rpcUrl: string } } };
  const quote = await capture(gateway.url, jsonRequest(call.path, call.body, networkHeader));
  if (quote.status !== 402) throw new Error(`the unpaid image call answered ${quote.status}`);
  const capturedDir = mkdtempSync(join(tmpdir(), 'x402-bench-402-'));
  const capturedFile = join(capturedDir, 'captured-402.json');
  writeFileSync(capturedFile, JSON.stringify({ [call.path]: quote }));
  const bare = await startReportingChild(join(import.meta.dirname, 'bare.ts'), { args: [capturedFile] });
  try {
    const accept = (JSON.parse(Buffer.from(quote.body, 'base64').toString()) as { accepts: { network: string; asset: `0x${string}`; payTo: `0x${string}`; maxAmountRequired: string; extra: { name: string; version: string } }[] }).accepts.find((a) => a.network === 'base');
    if (!accept) throw new Error(`the 402 asked with X-Network "${network}" lists no base requirement to set the official middleware up with: BENCH_NETWORK must be base or empty`);
    const peer = await startPeer({
      rpcUrl: health.sandboxNetworks.base.rpcUrl,
      chainId: (NETWORKS.base as EvmNetwork).chainId,
      asset: accept.asset,
      payTo: accept.payTo,
      amount: accept.maxAmountRequired,
      eip712: accept.extra,
      settlementKey: generatePrivateKey(),
    });
    try {
      const target = (origin: URL, serverPid: number, headers: Record<string, string>, newBodies = false): TimedLoadOptions => ({
        origin,
        spec: jsonRequest(call.path, call.body, headers),
        newBodies,
        connections,
        seconds,
        warmupSeconds: 1,
        expectStatus: 402,
        serverPid,
      });
      const sides: [string, TimedLoadOptions][] = [
        ...gateways.flatMap(([name, g]): [string, TimedLoadOptions][] => [
          [name, target(g.url, g.pid, networkHeader)],
          [`${name}, a new body each call`, target(g.url, g.pid, networkHeader, true)],
        ]),
        ['floor: node:http replaying those bytes', target(bare.url, bare.pid, {})],
        ['official middleware', target(peer.url, peer.pid, {})],
      ];
      const results = await alternatingLoad(sides.map(([, t]) => t), rounds);
      const official = results.at(-1)!;
      const cpuPerAnswer = (r: LoadResult) => (r.serverCpuPct === null ? '-' : `${((r.serverCpuPct / 100 / r.rps) * 1e6).toFixed(0)} us`);
      process.stdout.write(`unpaid 402 of ${call.path}, ${connections} connections, ${rounds} interleaved rounds:\n`);
      const width = Math.max(...sides.map(([name]) => name.length)) + 2;
      for (const [i, [name]] of sides.entries()) {
        const r = results[i]!;
        const ratio = i < sides.length - 1 ? `  ratio to official ${(r.rps / official.rps).toFixed(2)}x` : '';
        process.stdout.write(
          `  ${name.padEnd(width)}${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  server CPU ${cpuPerAnswer(r)}/answer  (${Object.entries(r.statuses).map(([s, n]) => `${s}x${n}`).join(' ')})${ratio}\n`,
        );
      }
    } finally {
      await peer.stop();
    }
  } finally {
    await bare.stop();
    rmSync(capturedDir, { recursive: true, force: true });
  }
} finally {
  for (const [, g] of gateways) await g.stop();
}
