// A PostgreSQL restart under load: three gateway instances share one PostgreSQL ledger and one settlement key
// (as behind a load balancer), payers pay concurrently, and the database is stopped the way an operator
// restarts it (`pg_ctl stop -m fast`: every session ends with 57P01 admin_shutdown), kept down for a while,
// and started again. What must hold:
// - every instance stays alive (no unhandled 'error' event from a pooled connection kills it);
// - /readyz answers 503 while the database is gone and 200 once it is back;
// - every payer ends either 200 and charged exactly once, or uncharged and told to pay again: a payer told
//   "pending" retries with the same proof, as told, until it gets its result or a refusal. Balances are read
//   on-chain once no settlement is left pending, nor any transaction of the key is left in the node's pool.
//   A payer told 503 (nothing charged, retry later) either takes it at its word and stops (it would pay anew
//   with a new proof: it must not have been charged), or retries the same proof once the database is back (a
//   reservation the outage interrupted must not hold its proof hostage). Half the payers do each.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { startPostgres, type PostgresServer } from './support/postgres.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { anvilRpc, pooledTransactions } from './support/anvil-pool.ts';
import { localEvmNetwork } from './support/local-rail.ts';

const base = NETWORKS.base as EvmNetwork;
const KEY_ENV = 'X402_TEST_SETTLEMENT_KEY';
const CHAT_ROUTE = '/api/v1/ai/chat';
const CHAT = { model: 'fake/chat', prompt: 'Tell me about the sea', max_tokens: 16 };
const PAYERS = 36;
const CONCURRENCY = 9;

let postgres: PostgresServer;
let databaseUrl: string;
let sandbox: EvmSandbox;
let upstream: Server;
const instances: ChildService[] = [];

/** An OpenAI-compatible chat upstream that answers after a short think, so calls are in flight when the database stops. */
async function startSlowUpstream(): Promise<Server> {
  let n = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const id = ++n;
      setTimeout(() => {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(
          JSON.stringify({
            id: `chatcmpl-${id}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: 'fake',
            choices: [{ index: 0, message: { role: 'assistant', content: `answer ${id}` }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
          }),
        );
      }, 100);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function instanceConfig(): Record<string, unknown> {
  const { port } = upstream.address() as AddressInfo;
  return {
    databaseUrl,
    publicUrl: 'http://gateway.test',
    networks: {
      base: localEvmNetwork(sandbox, KEY_ENV),
    },
    settlementTimeoutMs: 5_000,
    reconcileIntervalMs: 200,
    settlingGraceMs: 1_000,
    providers: { fake: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 } },
    models: [
      {
        id: 'fake/chat',
        capability: 'chat',
        provider: 'fake',
        maxTokens: 64,
        defaultMaxTokens: 16,
        price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' },
      },
    ],
  };
}

before(async () => {
  let server: Server;
  [postgres, sandbox, server] = await Promise.all([startPostgres(), startEvmSandbox(base), startSlowUpstream()]);
  upstream = server;
  databaseUrl = await postgres.createDatabase();
  // one at a time: the first migrates, the others find the schema in place
  for (let i = 0; i < 3; i++) instances.push(await startChildService(instanceConfig(), { [KEY_ENV]: sandbox.settlementPrivateKey }));
});

after(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  await new Promise((resolve) => upstream?.close(resolve));
  await sandbox?.stop();
  await postgres?.stop();
});

const alive = (instance: ChildService) => instance.process.exitCode === null && instance.process.signalCode === null;

async function readyz(instance: ChildService): Promise<number> {
  assert.ok(alive(instance), `instance ${instance.url} exited (${instance.process.exitCode ?? instance.process.signalCode})`);
  const response = await fetch(`${instance.url}/readyz`);
  await response.arrayBuffer();
  return response.status;
}

async function waitFor(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Answer {
  status: number;
  code?: string;
}

async function pay(instance: ChildService, proof: string): Promise<Answer> {
  const response = await postJson(`${instance.url}${CHAT_ROUTE}`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proof }).catch(() => undefined);
  if (!response) return { status: 0, code: `no answer: instance exited (${instance.process.exitCode ?? instance.process.signalCode})` };
  const body = (await response.json().catch(() => ({}))) as { code?: string; error?: string };
  return { status: response.status, code: body.code ?? body.error };
}

/** Told "pending" or "in progress" (409), or (if it retries) "unavailable, retry later" (503): come back with the same proof. */
const comeBack = (answer: Answer, retriesUnavailable: boolean) => answer.status === 409 || (retriesUnavailable && answer.status === 503);

test('PostgreSQL stopped and restarted under concurrent paid calls across three instances', async (t) => {
  const quote = await postJson(`${instances[0]!.url}${CHAT_ROUTE}`, CHAT, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const price = BigInt(requirement.maxAmountRequired);

  const payers: { account: PrivateKeyAccount; proof: string; instance: ChildService; before: bigint; answers: Answer[]; retriesUnavailable: boolean }[] = [];
  for (let i = 0; i < PAYERS; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    await sandbox.faucet(account.address, 1_000_000n);
    payers.push({
      account,
      proof: await signEvmProof(account, requirement, base.chainId),
      instance: instances[i % instances.length]!,
      before: await sandbox.balanceOf(account.address),
      answers: [],
      retriesUnavailable: i % 2 === 0,
    });
  }
  const payToBefore = await sandbox.balanceOf(sandbox.payTo as `0x${string}`);

  // The first call of every payer, CONCURRENCY at a time, across the three instances.
  let next = 0;
  let answered = 0;
  const firstCalls = Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < payers.length) {
        const payer = payers[next++]!;
        payer.answers.push(await pay(payer.instance, payer.proof));
        answered++;
      }
    }),
  );

  // Once the load is flowing, the database goes away with calls in every stage of their payment.
  await waitFor('the first paid calls to be answered', () => answered >= CONCURRENCY);
  await postgres.halt();
  const answeredBeforeOutage = answered;
  for (const instance of instances) await waitFor('/readyz to answer 503 while the database is down', async () => (await readyz(instance)) === 503);
  await waitFor('calls to be answered during the outage', () => answered > answeredBeforeOutage || next >= payers.length);
  assert.ok(instances.every(alive), 'every instance is alive with the database down');
  const metrics = await fetch(`${instances[0]!.url}/metrics`);
  assert.equal(metrics.status, 200, 'monitoring still answers while the database is down');
  assert.match(await metrics.text(), /x402_reconciler_backlog/);

  await postgres.resume();
  for (const instance of instances) await waitFor('/readyz to answer 200 once the database is back', async () => (await readyz(instance)) === 200);
  await firstCalls;

  // Every first answer was a clear one: served, told to wait for the result, or told nothing was charged.
  for (const payer of payers) assert.ok([200, 402, 409, 503].includes(payer.answers[0]!.status), JSON.stringify(payer.answers[0]));
  // A payer told to come back does so with the same proof until it gets its result or a refusal.
  for (const payer of payers) {
    while (comeBack(payer.answers.at(-1)!, payer.retriesUnavailable)) {
      await sleep(200);
      payer.answers.push(await pay(payer.instance, payer.proof));
      assert.ok(payer.answers.length < 300, `payer ${payer.account.address} was told to come back for ever`);
    }
  }
  assert.ok(instances.every(alive), 'every instance is alive after the restart');

  // Nothing is left to settle: no payment pending in the ledger, no transaction of the key in the node's pool.
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const pending = async () => (await db.query(`SELECT key, tx_hash, error, updated_at FROM payments WHERE state = 'pending'`)).rows;
    await waitFor('no payment left pending', async () => (await pending()).length === 0).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await pending())}`);
    });
  } finally {
    await db.end();
  }
  const rpc = anvilRpc(sandbox.rpcUrl);
  await waitFor('the settlement key to have nothing in the pool', async () => (await pooledTransactions(rpc, sandbox.settlementAddress)).size === 0);

  let paid = 0n;
  for (const payer of payers) {
    const final = payer.answers.at(-1)!;
    const balance = await sandbox.balanceOf(payer.account.address);
    const history = payer.answers.map((a) => `${a.status} ${a.code ?? ''}`).join(' > ');
    assert.ok([200, 402, ...(payer.retriesUnavailable ? [] : [503])].includes(final.status), `a clear final answer, not ${history}`);
    if (final.status === 200) {
      assert.equal(balance, payer.before - price, `200 and charged exactly once (${history})`);
      paid += price;
    } else {
      assert.equal(balance, payer.before, `told to pay again and charged nothing (${history})`);
    }
  }
  assert.equal(await sandbox.balanceOf(sandbox.payTo as `0x${string}`), payToBefore + paid, 'payTo received exactly what the 200s paid');
  const histories = new Map<string, number>();
  for (const payer of payers) {
    const history = payer.answers.map((a) => `${a.status} ${a.code ?? ''}`.trim()).join(' > ');
    histories.set(history, (histories.get(history) ?? 0) + 1);
  }
  t.diagnostic(`answers: ${[...histories].map(([history, n]) => `${n} x ${history}`).join('; ')}`);
  const outcomes = payers.map((payer) => payer.answers.at(-1)!.status);
  assert.ok(outcomes.includes(200), 'some payers were served');
});
