// Child process of the bench: the real service (sandbox chains for base, or for the comma-separated networks in
// BENCH_NETWORKS; temp data dir, port 0, the default request log on stdout, as an operator runs it).
// The ledger is SQLite in the temp data dir, or the PostgreSQL database named by BENCH_DATABASE_URL;
// BENCH_SETTLEMENT_BATCHING=1 turns settlementBatching on. BENCH_PAYMENT_EXCLUDED=1 leaves payment out (the baseline
// a payment's cost is measured against): a paid route's call without a payment runs its work at once and is
// answered as a settled payment is; everything else is the real service. Its calls should take the way paid calls
// take (gateway-child.ts's paymentExcludedIn).
// BENCH_UPSTREAM_URL names an OpenAI-compatible upstream (bench/mock-upstream.ts): its chat model is then served as
// MOCK_CHAT_MODEL (bench/mock-chat-model.ts), beside the built-in ones.
// Prints one JSON line {"url", "pid"} on stdout once listening (among the log lines); stops when stdin closes or on SIGTERM/SIGINT.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { startService } from '../src/service.ts';
import { PaymentGate } from '../src/payments/gate.ts';
import { runWork } from '../src/payments/outcome.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { MOCK_CHAT_MODEL } from './mock-chat-model.ts';

if (process.env.BENCH_PAYMENT_EXCLUDED === '1') {
  const process402 = PaymentGate.prototype.process;
  const payer = `0x${'cd'.repeat(20)}`;
  PaymentGate.prototype.process = async function (call) {
    if (call.payment !== undefined || call.refundOnly) return process402.call(this, call);
    const result = await runWork(call, { payer, charge: call.amount });
    const receipt = { success: true, transaction: `0x${'ab'.repeat(32)}`, network: 'base' as const, payer, amount: call.amount };
    return { kind: 'delivered', status: 200, body: result.body, media: result.media, receipt, wires: [2 as const] };
  };
}

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
const dataDir = mkdtempSync(join(tmpdir(), 'x402-bench-'));
const config = loadConfig({}, {
  host: '127.0.0.1',
  port: 0,
  dataDir,
  sandbox: { enabled: true, networks: (process.env.BENCH_NETWORKS ?? 'base').split(',') },
  ...(process.env.BENCH_DATABASE_URL ? { databaseUrl: process.env.BENCH_DATABASE_URL } : {}),
  ...(process.env.BENCH_SETTLEMENT_BATCHING === '1' ? { settlementBatching: true } : {}),
  ...(upstreamUrl ? { providers: { mock: { type: 'openai-compatible', baseURL: `${upstreamUrl}/v1` } }, models: [...embeddedModels(), MOCK_CHAT_MODEL] } : {}),
});
const service = await startService(config);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await service.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
process.stdin.on('end', () => void shutdown());
process.stdin.on('close', () => void shutdown());
process.stdin.resume();

process.stdout.write(`${JSON.stringify({ url: service.url, pid: process.pid })}\n`);
