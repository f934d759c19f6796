// Ledger engines side by side, one run: reservations per second (the one write every paid request makes
// before any work) and full payment lifecycles per second (reserve + verified + pending + settled), for
//   - SQLite (node:sqlite; WAL, synchronous=NORMAL, as SqliteLedger opens it),
//   - PostgreSQL with its production defaults (fsync on, synchronous_commit=on: every commit waits for the disk),
//   - PostgreSQL with synchronous_commit=off (a commit may be lost on an OS crash, never corrupted: the same
//     promise SQLite's synchronous=NORMAL in WAL mode makes),
// each driven sequentially (one caller) and with BENCH_LEDGER_CONCURRENCY calls in flight (PostgreSQL pool of 10).
// Every engine writes to the same file system (the OS temp dir). PostgreSQL is a throwaway local server
// (test/support/postgres.ts), reached over TCP on 127.0.0.1.
// Then the same engines under the whole gateway: paid image calls end to end (sign -> verify -> reserve -> generate
// -> store -> settle on the sandbox anvil chain), the gateway (bench/serve.ts) in a child process on that engine,
// proofs pre-signed (bench/paid-load.ts), BENCH_LEDGER_PAID_REQUESTS at BENCH_LEDGER_PAID_CONCURRENCY at a time.
//
//   npx node bench/ledger.ts          settings (env): BENCH_LEDGER_RESERVATIONS (3000), BENCH_LEDGER_CONCURRENCY (32),
//                                     BENCH_LEDGER_PAID_REQUESTS (200), BENCH_LEDGER_PAID_CONCURRENCY (8)
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Ledger, NewPayment } from '../src/store/ledger.ts';
import { SqliteLedger } from '../src/store/sqlite-ledger.ts';
import { PostgresLedger } from '../src/store/postgres-ledger.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { startGatewayChild } from './gateway-child.ts';
import { paidThroughput, type PaidRun } from './paid-load.ts';
import { envNumber } from './env-number.ts';

const N = envNumber('BENCH_LEDGER_RESERVATIONS', 3000);
const CONCURRENCY = envNumber('BENCH_LEDGER_CONCURRENCY', 32);
const PAID_REQUESTS = envNumber('BENCH_LEDGER_PAID_REQUESTS', 200);
const PAID_CONCURRENCY = envNumber('BENCH_LEDGER_PAID_CONCURRENCY', 8);
const WARMUP = 200;

const run = randomBytes(4).toString('hex');
let serial = 0;
function payment(): NewPayment {
  const n = serial++;
  const nonce = `0x${run}${n.toString(16).padStart(56, '0')}`;
  return {
    key: `evm:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x00000000000000000000000000000000000000aa:${nonce}`,
    network: 'base',
    payer: '0x00000000000000000000000000000000000000aa',
    amount: '10000',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: '0x00000000000000000000000000000000000000bb',
    resource: 'http://127.0.0.1:4021/api/v1/ai/chat',
    model: 'gpt-4o-mini',
    requestHash: randomBytes(32).toString('hex'),
    // about the size of a real EIP-3009 payload and requirement
    payload: {
      x402Version: 1,
      scheme: 'exact',
      network: 'base',
      payload: {
        signature: `0x${randomBytes(65).toString('hex')}`,
        authorization: { from: '0x00000000000000000000000000000000000000aa', to: '0x00000000000000000000000000000000000000bb', value: '10000', validAfter: '0', validBefore: '99999999999', nonce },
      },
    },
    requirements: {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '10000',
      resource: 'http://127.0.0.1:4021/api/v1/ai/chat',
      description: 'chat completion',
      mimeType: 'application/json',
      payTo: '0x00000000000000000000000000000000000000bb',
      maxTimeoutSeconds: 60,
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      extra: { name: 'USD Coin', version: '2' },
    },
  };
}

async function reserveOnly(ledger: Ledger): Promise<void> {
  const outcome = await ledger.reserve(payment());
  if (!outcome.reserved) throw new Error('a fresh key was not reserved');
}

async function lifecycle(ledger: Ledger): Promise<void> {
  const p = payment();
  if (!(await ledger.reserve(p)).reserved) throw new Error('a fresh key was not reserved');
  await ledger.transition(p.key, ['reserved'], { state: 'verified', payer: p.payer });
  await ledger.transition(p.key, ['verified'], { state: 'pending', result: { status: 200, body: { response: 'x'.repeat(200) }, media: [] } });
  await ledger.transition(p.key, ['pending'], { state: 'settled', txHash: `0x${randomBytes(32).toString('hex')}` });
}

/** ops per second of `op`, `total` times, `concurrency` at a time */
async function measure(ledger: Ledger, op: (ledger: Ledger) => Promise<void>, total: number, concurrency: number): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      await op(ledger);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return total / ((performance.now() - started) / 1000);
}

interface Row {
  engine: string;
  reserveSeq: number;
  reserveConc: number;
  lifecycleSeq: number;
  lifecycleConc: number;
  paid?: PaidRun;
}

async function bench(engine: string, open: () => Promise<Ledger>): Promise<Row> {
  const ledger = await open();
  try {
    await measure(ledger, reserveOnly, WARMUP, 1);
    const row: Row = {
      engine,
      reserveSeq: await measure(ledger, reserveOnly, N, 1),
      reserveConc: await measure(ledger, reserveOnly, N, CONCURRENCY),
      lifecycleSeq: await measure(ledger, lifecycle, Math.ceil(N / 4), 1),
      lifecycleConc: await measure(ledger, lifecycle, Math.ceil(N / 4), CONCURRENCY),
    };
    return row;
  } finally {
    await ledger.close();
  }
}

/** The gateway on one engine (env for bench/serve.ts): a warm-up round, then the measured paid run. */
async function paidOn(env: Record<string, string>): Promise<PaidRun> {
  const gateway = await startGatewayChild(env);
  try {
    await paidThroughput(gateway.url, { requests: PAID_CONCURRENCY * 2, concurrency: PAID_CONCURRENCY });
    return await paidThroughput(gateway.url, { requests: PAID_REQUESTS, concurrency: PAID_CONCURRENCY, serverPid: gateway.pid });
  } finally {
    await gateway.stop();
  }
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const started = performance.now();
const rows: Row[] = [];
const sqliteDir = mkdtempSync(join(tmpdir(), 'x402-bench-sqlite-'));
const postgres = await startPostgres({ durable: true });
/** a fresh database; synchronous_commit=off for every session when `asyncCommit` */
async function database(name: string, asyncCommit: boolean): Promise<string> {
  const url = await postgres.createDatabase(name);
  if (asyncCommit) {
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
    await admin.end();
  }
  return url;
}
try {
  const engines: { engine: string; open: () => Promise<Ledger>; gatewayEnv: () => Promise<Record<string, string>> }[] = [
    {
      engine: 'SQLite (WAL, synchronous=NORMAL)',
      open: async () => new SqliteLedger(join(sqliteDir, 'ledger.db')),
      gatewayEnv: async () => ({}),
    },
    {
      engine: 'PostgreSQL (synchronous_commit=on)',
      open: async () => PostgresLedger.open({ connectionString: await database('bench_durable', false) }),
      gatewayEnv: async () => ({ BENCH_DATABASE_URL: await database('paid_durable', false) }),
    },
    {
      engine: 'PostgreSQL (synchronous_commit=off)',
      open: async () => PostgresLedger.open({ connectionString: await database('bench_async_commit', true) }),
      gatewayEnv: async () => ({ BENCH_DATABASE_URL: await database('paid_async_commit', true) }),
    },
  ];
  for (const { engine, open, gatewayEnv } of engines) {
    log(`${engine}: ledger alone…`);
    const row = await bench(engine, open);
    log(`${engine}: the gateway on it, ${PAID_REQUESTS} paid image calls at ${PAID_CONCURRENCY} in flight…`);
    row.paid = await paidOn(await gatewayEnv());
    rows.push(row);
  }
} finally {
  await postgres.stop();
  rmSync(sqliteDir, { recursive: true, force: true });
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(0));
console.log(
  `ledger bench: ${N} reservations (${Math.ceil(N / 4)} lifecycles) per cell; concurrent = ${CONCURRENCY} in flight; ` +
    `${cpus().length} CPU ${cpus()[0]?.model ?? ''}; Node ${process.version}; temp dir ${tmpdir()}`,
);
console.log(
  `paid: ${PAID_REQUESTS} image calls (preview-image 256x256) end to end on the sandbox chain, ${PAID_CONCURRENCY} in flight, ` +
    `proofs pre-signed; settled requests/s and their latency`,
);
const header = [
  'engine',
  'reserve/s seq',
  `reserve/s x${CONCURRENCY}`,
  'lifecycle/s seq',
  `lifecycle/s x${CONCURRENCY}`,
  `paid/s x${PAID_CONCURRENCY}`,
  'paid p50 ms',
  'paid p99 ms',
  'settled',
];
const table = [
  header,
  ...rows.map((r) => [
    r.engine,
    fmt(r.reserveSeq),
    fmt(r.reserveConc),
    fmt(r.lifecycleSeq),
    fmt(r.lifecycleConc),
    r.paid ? r.paid.rps.toFixed(1) : '-',
    ms(r.paid?.latency.p50),
    ms(r.paid?.latency.p99),
    r.paid ? `${r.paid.settled}/${r.paid.requests}` : '-',
  ]),
];
const widths = header.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
for (const line of table) console.log(line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
for (const r of rows) {
  if (r.paid && r.paid.settled < r.paid.requests) console.log(`note: ${r.engine}: paid statuses ${JSON.stringify(r.paid.statuses)}`);
}
console.log(`bench took ${((performance.now() - started) / 1000).toFixed(1)} s`);
