// node bench/proxy.ts: a short chat (/v1/chat/completions, max_tokens 4) through `x402-ai proxy`, figures side by
// side from one run, on the gateway as `npm start` runs it (bench/serve.ts children on a sandbox chain):
//   proxy vouchers   the proxy (the CLI, a child process) pays payment-channel vouchers, one channel per call in flight
//   direct vouchers  the same payment without the proxy: this process pays with the proxy's own payer (same lanes,
//                    signer, caps and spend file), the price known (as the proxy knows it from its quote cache)
//   proxy exact      the proxy with --scheme exact (a transaction per call)
//   payment left out the same calls to a gateway child whose paid routes run their work at once for a call without
//                    payment (BENCH_PAYMENT_EXCLUDED=1), direct, through a proxy, and through bench/bare-relay.ts (the
//                    least a node:http relay does: the floor of any hop written on Node)
// Sides take turns in each round (reversed every other round) after an uncounted warm-up round. Printed per
// concurrency: calls/s, p50, the CPU each process spent per call, what the proxy adds to p50 over the same payment
// direct, vouchers through the proxy as a share of the work alone and of exact through the proxy, and what the hop
// alone adds (payment left out: through the proxy, through the bare relay). First, before any child starts (a quiet
// process): the voucher signature's CPU, the proxy's signer (libsecp256k1, src/x402/libsecp256k1.ts) against viem's.
// Settings: BENCH_PROXY_REQUESTS (160 per side per round), BENCH_PROXY_CONCURRENCY ("1,8"), BENCH_ROUNDS (3),
// BENCH_WARMUP_REQUESTS (80).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { encodeHeader } from '../src/x402/encoding.ts';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { startGatewayChild } from './gateway-child.ts';
import { jsonRequest, postOnce, processCpuSeconds, stats, type LatencyStats } from './load.ts';
import { headerIn, LeanConnection, requestBytes } from './lean-connection.ts';
import { envNumber } from './env-number.ts';
import { payingBuyer } from '../src/client/proxy/paying-buyer.ts';
import { fastEvmSigner } from '../src/client/fast-signer.ts';
import { libsecp256k1Account } from '../src/x402/libsecp256k1-account.ts';
import { libsecp256k1 } from '../src/x402/libsecp256k1.ts';

const CLI = fileURLToPath(new URL('../src/client/cli.ts', import.meta.url));
const BARE_RELAY = fileURLToPath(new URL('./bare-relay.ts', import.meta.url));
const CHAT = { path: '/v1/chat/completions', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, seed: 1 } };
const requestsPerRound = envNumber('BENCH_PROXY_REQUESTS', 160);
const rounds = envNumber('BENCH_ROUNDS', 3);
const warmupRequests = envNumber('BENCH_WARMUP_REQUESTS', 80);
const concurrencies = (process.env.BENCH_PROXY_CONCURRENCY ?? '1,8').split(',').map(Number).filter((n) => n > 0);
const maxConcurrency = Math.max(...concurrencies);

interface Window {
  ms: number[];
  seconds: number;
  /** CPU seconds per process over the window */
  cpu: Record<string, number | null>;
}

const dir = mkdtempSync(join(tmpdir(), 'x402-bench-proxy-'));

async function fundedKey(gateway: URL): Promise<Hex> {
  const key = generatePrivateKey();
  const funded = await postOnce(gateway, '/sandbox/faucet', { network: 'base', address: privateKeyToAccount(key).address, amount: '100000000' });
  if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}`);
  return key;
}

/** `x402-ai proxy` in a child process, as a buyer starts it. */
async function startProxyChild(name: string, gateway: URL, faucet: URL, args: string[]) {
  const key = await fundedKey(faucet);
  return startListening(
    name,
    [CLI, 'proxy', '--port', '0', '--gateway', gateway.origin, '--network', 'base', '--quiet', '--channels', String(maxConcurrency), '--spend-file', join(dir, `${name}.jsonl`), ...args],
    { ...process.env, X402_EVM_PRIVATE_KEY: key },
  );
}

/** A child that prints "listening on <url>" once ready. */
async function startListening(name: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<URL>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match) resolve(new URL(match[1]!));
    });
    child.once('exit', (code) => reject(new Error(`the ${name} child exited (${code})`)));
  });
  child.stdout!.resume();
  return { url, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** `requests` calls, `concurrency` at a time, each through `call`; the CPU of `pids` measured over the window. */
async function window(requests: number, concurrency: number, call: (slot: number) => Promise<boolean>, pids: Record<string, number>): Promise<Window> {
  const ms: number[] = [];
  let next = 0;
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid === process.pid ? process.cpuUsage() : processCpuSeconds(pid)]));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, slot) => {
      while (next < requests) {
        next++;
        const t = performance.now();
        if (await call(slot)) ms.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu: Record<string, number | null> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const was = before[name];
    if (pid === process.pid) {
      const used = process.cpuUsage(was as NodeJS.CpuUsage);
      cpu[name] = (used.user + used.system) / 1e6;
    } else {
      const now = processCpuSeconds(pid);
      cpu[name] = now === null || was === null ? null : now - (was as number);
    }
  }
  return { ms, seconds, cpu };
}

function summary(windows: Window[]) {
  const calls = windows.reduce((n, w) => n + w.ms.length, 0);
  const seconds = windows.reduce((n, w) => n + w.seconds, 0);
  const cpuMs: Record<string, number | null> = {};
  for (const name of Object.keys(windows[0]?.cpu ?? {})) {
    const values = windows.map((w) => w.cpu[name]);
    cpuMs[name] = values.every((v) => typeof v === 'number') ? ((values as number[]).reduce((a, b) => a + b, 0) * 1000) / calls : null;
  }
  return { calls, rps: calls / seconds, latency: stats(windows.flatMap((w) => w.ms)) as LatencyStats, cpuMs };
}

const cpuText = (cpuMs: Record<string, number | null>) =>
  Object.entries(cpuMs)
    .filter(([, v]) => v !== null)
    .map(([name, v]) => `${name} ${v!.toFixed(2)}`)
    .join(', ');

/** CPU per voucher signature, the median of five rounds: the proxy's signer against viem's local account (what the official examples use). */
async function signingCpu(): Promise<{ fast: number; viem: number }> {
  const key = generatePrivateKey();
  const channelId = `0x${'ab'.repeat(32)}` as Hex;
  let amount = 0;
  const measure = async (signer: Parameters<typeof signVoucher>[0], n: number) => {
    for (let i = 0; i < 200; i++) await signVoucher(signer, channelId, String(++amount), 'eip155:8453');
    const rounds: number[] = [];
    for (let round = 0; round < 5; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) await signVoucher(signer, channelId, String(++amount), 'eip155:8453');
      const used = process.cpuUsage(before);
      rounds.push((used.user + used.system) / n); // microseconds
    }
    return rounds.sort((a, b) => a - b)[2]!;
  };
  return { fast: await measure(fastEvmSigner(libsecp256k1Account(key)), 600), viem: await measure(privateKeyToAccount(key), 100) };
}

const signing = await signingCpu();
const gateway = await startGatewayChild();
const workOnly = await startGatewayChild({ BENCH_PAYMENT_EXCLUDED: '1' });
const proxies: Array<{ stop(): void }> = [];
try {
  const vouchersProxy = await startProxyChild('vouchers', gateway.url, gateway.url, []);
  const exactProxy = await startProxyChild('exact', gateway.url, gateway.url, ['--scheme', 'exact']);
  const workOnlyProxy = await startProxyChild('work-only', workOnly.url, gateway.url, []);
  const bareRelay = await startListening('bare relay', [BARE_RELAY, workOnly.url.origin]);
  proxies.push(vouchersProxy, exactProxy, workOnlyProxy, bareRelay);

  // the direct side pays with the proxy's own payer, in this process
  const direct = await payingBuyer({
    gateway: gateway.url.origin,
    network: 'base',
    evmPrivateKey: await fundedKey(gateway.url),
    caps: {},
    spendFile: join(dir, 'direct.jsonl'),
    channels: maxConcurrency,
    owner: 'proxy',
  });
  const quote = await postOnce(gateway.url, CHAT.path, CHAT.body, { 'X-Network': 'base' });
  const required = decodePaymentRequiredHeader(String(quote.headers['payment-required']));
  // every side sends over lean connections (lean-connection.ts), one per side and slot: node:http's client would
  // spend as much CPU per call as the processes measured, on the same 2 cores
  const connections = new Map<string, LeanConnection>();
  const connectionFor = (side: string, slot: number, origin: URL) => {
    const key = `${side} ${slot}`;
    if (!connections.has(key)) connections.set(key, new LeanConnection(origin));
    return connections.get(key)!;
  };
  const plain = jsonRequest(CHAT.path, CHAT.body, { Authorization: 'Bearer sk-made-up' });
  const through = (side: string, origin: URL) => {
    const bytes = requestBytes(origin, plain);
    return async (slot: number) => (await connectionFor(side, slot, origin).send(bytes)).status === 200;
  };
  const sides = {
    'proxy vouchers': { call: through('proxy vouchers', vouchersProxy.url), pids: { gateway: gateway.pid, proxy: vouchersProxy.pid } },
    'direct vouchers': {
      call: async (slot: number) => {
        const attempt = await direct.payer.pay(required, CHAT.path);
        const paid = jsonRequest(CHAT.path, CHAT.body, { 'X-Network': 'base', 'PAYMENT-SIGNATURE': encodeHeader(attempt.payload) });
        const reply = await connectionFor('direct', slot, gateway.url).send(requestBytes(gateway.url, paid));
        if (reply.status !== 200) {
          await attempt.failed(true);
          return false;
        }
        await attempt.delivered(decodePaymentResponseHeader(headerIn(reply.head, 'PAYMENT-RESPONSE') ?? ''));
        return true;
      },
      pids: { gateway: gateway.pid, client: process.pid },
    },
    'proxy exact': { call: through('proxy exact', exactProxy.url), pids: { gateway: gateway.pid, proxy: exactProxy.pid } },
    'payment left out, direct': { call: through('work-only direct', workOnly.url), pids: { gateway: workOnly.pid } },
    'payment left out, through the proxy': { call: through('work-only proxy', workOnlyProxy.url), pids: { gateway: workOnly.pid, proxy: workOnlyProxy.pid } },
    'payment left out, through a bare relay': { call: through('work-only bare relay', bareRelay.url), pids: { gateway: workOnly.pid, relay: bareRelay.pid } },
  };
  type Side = keyof typeof sides;
  const lines: string[] = [];
  for (const concurrency of concurrencies) {
    const windows = Object.fromEntries(Object.keys(sides).map((side) => [side, [] as Window[]])) as Record<Side, Window[]>;
    for (let round = -1; round < rounds; round++) {
      const order = Object.keys(sides) as Side[];
      if (round % 2 === 0) order.reverse();
      for (const side of order) {
        const measured = await window(round < 0 ? warmupRequests : requestsPerRound, concurrency, sides[side].call, sides[side].pids);
        if (round >= 0) windows[side].push(measured);
      }
    }
    const results = Object.fromEntries(Object.entries(windows).map(([side, list]) => [side, summary(list)])) as Record<Side, ReturnType<typeof summary>>;
    lines.push(`short chat, ${concurrency} in flight (${rounds} rounds of ${requestsPerRound}):`);
    for (const [side, result] of Object.entries(results)) {
      lines.push(`  ${side.padEnd(36)} ${result.rps.toFixed(1).padStart(7)} calls/s  p50 ${result.latency.p50.toFixed(2)} ms  CPU ms/call: ${cpuText(result.cpuMs)}`);
    }
    const vouchers = results['proxy vouchers'];
    lines.push(
      `  the proxy adds ${(vouchers.latency.p50 - results['direct vouchers'].latency.p50).toFixed(2)} ms to p50 over the same payment direct; ` +
        `vouchers through the proxy / payment left out: ${(vouchers.rps / results['payment left out, direct'].rps).toFixed(2)}x direct, ` +
        `${(vouchers.rps / results['payment left out, through the proxy'].rps).toFixed(2)}x through the proxy; ` +
        `/ exact through the proxy: ${(vouchers.rps / results['proxy exact'].rps).toFixed(2)}x`,
    );
    const direct = results['payment left out, direct'].latency.p50;
    lines.push(
      `  the hop alone, payment left out, adds to p50: ${(results['payment left out, through the proxy'].latency.p50 - direct).toFixed(2)} ms through the proxy, ` +
        `${(results['payment left out, through a bare relay'].latency.p50 - direct).toFixed(2)} ms through a bare node:http relay`,
    );
  }
  lines.push(`voucher signature, CPU per voucher (median of 5 rounds, before the load): ${signing.fast.toFixed(0)} us with the proxy's signer (libsecp256k1, ${libsecp256k1().build}), ${signing.viem.toFixed(0)} us with viem's account`);
  for (const connection of connections.values()) connection.close();
  direct.close();
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const proxy of proxies) proxy.stop();
  await Promise.all([gateway.stop(), workOnly.stop()]);
  rmSync(dir, { recursive: true, force: true });
}
