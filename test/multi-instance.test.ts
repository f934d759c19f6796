// Several gateway instances sharing one PostgreSQL ledger, as behind a load balancer: separate processes on
// their own ports, live (non-sandbox) configs whose `base` network settles through a local facilitator on ONE
// anvil chain started here. A proof is used once across all of them, a pending payment is reconciled by one of
// them, a process killed mid-request leaves a ledger the next start repairs, and a settlement transaction that
// died with its instance (the node lost it) does not stall the key the others still send from.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createPublicClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { exact } from 'x402/schemes';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { LocalEvmFacilitator } from '../src/payments/facilitators/evm/local-evm.ts';
import { PostgresLedger } from '../src/store/postgres-ledger.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { decodeHeader } from '../src/x402/encoding.ts';
import { evmPaymentKey } from '../src/x402/payment-key.ts';
import { proofOf, requirementOf } from './support/v1-wire-facilitator.ts';
import type { EvmExactPayload, PaymentPayload, PaymentRequirements } from '../src/x402/types.ts';
import type { PaymentRecord } from '../src/store/ledger.ts';
import { startPostgres, type PostgresServer } from './support/postgres.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { postJson } from './support/service.ts';
import { anvilRpc, pooledTransactions } from './support/anvil-pool.ts';
import { eip3009Abi } from '../src/payments/facilitators/evm/eip3009-abi.ts';
import { localEvmNetwork } from './support/local-rail.ts';

const base = NETWORKS.base as EvmNetwork;
const KEY_ENV = 'X402_TEST_SETTLEMENT_KEY';
const CHAT = { model: 'fake/chat', prompt: 'Tell me about the sea', max_tokens: 16 };
const SLOW_CHAT = { model: 'slow/chat', prompt: 'Take your time', max_tokens: 16 };

let postgres: PostgresServer;
let databaseUrl: string;
let sandbox: EvmSandbox;
let ledger: PostgresLedger;
let upstream: FakeUpstream;
let a: ChildService;
let b: ChildService;
const children: ChildService[] = [];

/**
 * An OpenAI-compatible upstream: /ok answers at once (and counts each generation), /hang never answers, /hold
 * holds requests while `holding` is set and answers like /ok once it is cleared.
 */
interface FakeUpstream {
  url: string;
  generations: number;
  hanging: number;
  holding: boolean;
  close(): Promise<void>;
}

async function startFakeUpstream(): Promise<FakeUpstream> {
  const state = { generations: 0, hanging: 0, holding: true };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      if (request.url?.startsWith('/hang/') || (request.url?.startsWith('/hold/') && state.holding)) {
        state.hanging++;
        return; // never answers
      }
      const n = ++state.generations;
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(
        JSON.stringify({
          id: `chatcmpl-${n}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'fake',
          choices: [{ index: 0, message: { role: 'assistant', content: `generation number ${n}` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get generations() {
      return state.generations;
    },
    get hanging() {
      return state.hanging;
    },
    get holding() {
      return state.holding;
    },
    set holding(value: boolean) {
      state.holding = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chatModel(id: string, provider: string) {
  return {
    id,
    capability: 'chat',
    provider,
    maxTokens: 64,
    defaultMaxTokens: 16,
    price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' },
  };
}

/** A live config: real `networks` (so no sandbox), the shared database, fast reconciliation. */
function instanceConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    databaseUrl,
    // one public URL for all instances, as behind a load balancer
    publicUrl: 'http://gateway.test',
    networks: {
      base: localEvmNetwork(sandbox, KEY_ENV),
    },
    settlementTimeoutMs: 5_000,
    reconcileIntervalMs: 100,
    settlingGraceMs: 1_000,
    providers: {
      fake: { type: 'openai-compatible', baseURL: `${upstream.url}/ok/v1`, maxRetries: 0 },
      hang: { type: 'openai-compatible', baseURL: `${upstream.url}/hang/v1`, maxRetries: 0 },
      hold: { type: 'openai-compatible', baseURL: `${upstream.url}/hold/v1`, maxRetries: 0 },
    },
    models: [chatModel('fake/chat', 'fake'), chatModel('slow/chat', 'hang'), chatModel('held/chat', 'hold')],
    ...overrides,
  };
}

async function startInstance(overrides: Record<string, unknown> = {}): Promise<ChildService> {
  const child = await startChildService(instanceConfig(overrides), { [KEY_ENV]: sandbox.settlementPrivateKey });
  children.push(child);
  return child;
}

before(async () => {
  [postgres, sandbox, upstream] = await Promise.all([startPostgres(), startEvmSandbox(base), startFakeUpstream()]);
  databaseUrl = await postgres.createDatabase();
  ledger = await PostgresLedger.open({ connectionString: databaseUrl });
  [a, b] = await Promise.all([startInstance(), startInstance()]);
});

after(async () => {
  await Promise.all(children.map((child) => child.stop()));
  await ledger?.close();
  await upstream?.close();
  await sandbox?.stop();
  await postgres?.stop();
});

async function fundedBuyer(): Promise<PrivateKeyAccount> {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(buyer.address, 10_000_000n);
  return buyer;
}

/** What the instance asks for this body (its 402), and a proof signed for it as x402-fetch signs one. */
async function signedProof(instance: ChildService, body: unknown, buyer: PrivateKeyAccount) {
  const quote = await postJson(`${instance.url}/api/v1/ai/chat`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirements = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  type OfficialRequirements = Parameters<typeof exact.evm.createPaymentHeader>[2];
  const header = await exact.evm.createPaymentHeader(buyer, 1, requirements as unknown as OfficialRequirements);
  const payment = decodeHeader(header) as PaymentPayload;
  const key = evmPaymentKey(base.chainId, sandbox.asset, payment.payload as EvmExactPayload);
  return { header, payment, requirements, key, price: BigInt(requirements.maxAmountRequired) };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const logsAbout = (key: string, msg: string) =>
  children.flatMap((child) => child.logs.filter((line) => line.key === key && line.msg === msg));

describe('two instances, one PostgreSQL ledger', () => {
  test('50 concurrent uses of one proof across both instances: one generation, one settlement', async () => {
    const buyer = await fundedBuyer();
    const proof = await signedProof(a, CHAT, buyer);
    const [buyerBefore, payToBefore] = [await sandbox.balanceOf(buyer.address), await sandbox.balanceOf(sandbox.payTo)];
    const generationsBefore = upstream.generations;

    const responses = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const instance = i % 2 === 0 ? a : b;
        const response = await postJson(`${instance.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proof.header });
        return { status: response.status, body: await response.text() };
      }),
    );

    const statuses = responses.map((r) => r.status);
    assert.ok(statuses.every((s) => s === 200 || s === 409), `only 200 or 409 (in progress / pending): ${statuses.join(',')}`);
    const delivered = new Set(responses.filter((r) => r.status === 200).map((r) => r.body));
    assert.equal(delivered.size, 1, 'every 200 carries the one generated body');
    assert.equal(upstream.generations - generationsBefore, 1, 'the model ran once');

    // Both instances now replay the stored result for the same proof; nothing more moves.
    for (const instance of [a, b]) {
      const replay = await postJson(`${instance.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proof.header });
      assert.equal(replay.status, 200);
      assert.equal(await replay.text(), [...delivered][0]);
    }
    assert.equal(upstream.generations - generationsBefore, 1);
    assert.equal(await sandbox.balanceOf(buyer.address), buyerBefore - proof.price, 'charged exactly once');
    assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + proof.price);
    const row = await ledger.get(proof.key);
    assert.equal(row?.state, 'settled');
    assert.match(row?.txHash ?? '', /^0x[0-9a-f]{64}$/);
  });

  test('44 distinct proofs across both instances sharing one settlement key: every one 200 and settled once', async () => {
    // Both instances send from the same key at once; the ledger's nonce row makes them take turns.
    const buyers = await Promise.all(Array.from({ length: 4 }, () => fundedBuyer()));
    const proofs: Awaited<ReturnType<typeof signedProof>>[] = [];
    for (let i = 0; i < 44; i++) proofs.push(await signedProof(i % 2 === 0 ? a : b, CHAT, buyers[i % buyers.length]!));
    const before = await Promise.all(buyers.map((buyer) => sandbox.balanceOf(buyer.address)));
    const payToBefore = await sandbox.balanceOf(sandbox.payTo);

    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < proofs.length) {
          const i = next++;
          const instance = i % 2 === 0 ? a : b;
          const response = await postJson(`${instance.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proofs[i]!.header });
          await response.arrayBuffer();
          statuses[i] = response.status;
        }
      }),
    );

    assert.deepEqual(statuses, proofs.map(() => 200), 'every paid call answered 200');
    const rows = await Promise.all(proofs.map((proof) => ledger.get(proof.key)));
    assert.ok(rows.every((row) => row?.state === 'settled'), 'every payment settled');
    assert.equal(new Set(rows.map((row) => row?.txHash)).size, proofs.length, 'each in its own transaction');
    for (const [i, buyer] of buyers.entries()) {
      const paid = proofs.filter((_, n) => n % buyers.length === i).reduce((sum, proof) => sum + proof.price, 0n);
      assert.equal(await sandbox.balanceOf(buyer.address), before[i]! - paid, 'each buyer charged exactly its proofs');
    }
    const total = proofs.reduce((sum, proof) => sum + proof.price, 0n);
    assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + total, 'payTo received exactly the total');
  });

  test('a pending payment is reconciled exactly once while both instances run', async () => {
    // A payment whose settlement really landed, but whose row stayed 'pending' (as after a timeout or a crash
    // right after broadcast). It is settled here by a separate settlement key, so no nonce races the children.
    const settlerKey = generatePrivateKey();
    await sandbox.faucet(privateKeyToAccount(settlerKey).address, 1n); // gas
    const settler = new LocalEvmFacilitator({
      network: base,
      rpcUrl: sandbox.rpcUrl,
      settlementPrivateKey: settlerKey,
      asset: sandbox.asset,
      eip712: sandbox.eip712,
      receiptTimeoutMs: 5_000,
      pollingIntervalMs: 20,
    });
    const buyer = await fundedBuyer();
    const proof = await signedProof(a, CHAT, buyer);
    const settled = await settler.settle(proofOf(proof.payment), requirementOf(proof.requirements));
    assert.equal(settled.status, 'settled');
    const tx = settled.status === 'settled' ? settled.transaction : '';

    assert.deepEqual(
      await ledger.reserve({
        key: proof.key,
        network: 'base',
        payer: buyer.address,
        amount: proof.requirements.maxAmountRequired,
        asset: sandbox.asset,
        payTo: sandbox.payTo,
        resource: proof.requirements.resource,
        model: CHAT.model,
        requestHash: 'test-inserted',
        payload: proof.payment,
        requirements: proof.requirements,
      }),
      { reserved: true },
    );
    assert.ok(await ledger.transition(proof.key, ['reserved'], { state: 'verified', payer: buyer.address }));
    assert.ok(await ledger.transition(proof.key, ['verified'], { state: 'pending', txHash: tx, result: { status: 200, body: {}, media: [] } }));

    // Both instances poll every 100 ms; the row becomes claimable once it is a second old (settlingGraceMs).
    const row = await waitFor('the reconciler to settle the row', async () => {
      const current = await ledger.get(proof.key);
      return current?.state === 'settled' ? current : undefined;
    });
    assert.equal(row.txHash, tx);
    await sleep(500); // several more passes of both instances
    // the log is buffered (flushed within 250 ms): wait for the lines rather than expect them already written
    await waitFor('the reconciliation to be logged', async () => (logsAbout(proof.key, 'pending payment reconciled: settled').length > 0 ? true : undefined));
    assert.equal(logsAbout(proof.key, 'reconciling pending payment').length, 1, 'checked by one instance, once');
    assert.equal(logsAbout(proof.key, 'pending payment reconciled: settled').length, 1);
    assert.equal((await ledger.get(proof.key))?.updatedAt, row.updatedAt, 'no later transition');
  });

  test('SIGKILL mid-generation leaves the payment unsettled; the next start releases it', async () => {
    // This instance considers a reservation abandoned after 1 s; the others keep the 10 min default, so only
    // the restarted process repairs the row.
    const crashConfig = { abandonedAfterMs: 1_000 };
    const doomed = await startInstance(crashConfig);
    const buyer = await fundedBuyer();
    const proof = await signedProof(doomed, SLOW_CHAT, buyer);
    const balanceBefore = await sandbox.balanceOf(buyer.address);
    const hangingBefore = upstream.hanging;

    const request = postJson(`${doomed.url}/api/v1/ai/chat`, SLOW_CHAT, { 'X-Network': 'base', 'X-PAYMENT': proof.header }).catch(
      (error: unknown) => error,
    );
    await waitFor('the generation to start upstream', async () => (upstream.hanging > hangingBefore ? true : undefined));
    await doomed.kill();
    assert.ok((await request) instanceof Error, 'the client saw the connection die');

    const left: PaymentRecord | undefined = await ledger.get(proof.key);
    assert.ok(left);
    assert.ok(left.state === 'reserved' || left.state === 'verified', `left ${left.state}`);
    assert.equal(left.txHash, null);
    assert.equal(await sandbox.balanceOf(buyer.address), balanceBefore, 'nothing settled');

    const restarted = await startInstance(crashConfig);
    const released = await waitFor('the restarted instance to release the reservation', async () => {
      const current = await ledger.get(proof.key);
      return current?.state === 'released' ? current : undefined;
    });
    assert.equal(released.error, 'abandoned before settlement');
    // the row changes before the child's log line reaches this process: wait for the line, then count them all
    await waitFor('the release to be logged', async () => (logsAbout(proof.key, 'abandoned reservation released').length > 0 ? true : undefined));
    assert.equal(logsAbout(proof.key, 'abandoned reservation released').length, 1, 'released once, by one instance');
    assert.ok(restarted.logs.length > 0);
    assert.equal(await sandbox.balanceOf(buyer.address), balanceBefore);
  });

  test('SIGKILL mid-generation with the default abandonedAfterMs: another instance serves the same proof within a lease', async () => {
    const doomed = await startInstance();
    const buyer = await fundedBuyer();
    const body = { model: 'held/chat', prompt: 'Hold on', max_tokens: 16 };
    const proof = await signedProof(doomed, body, buyer);
    const balanceBefore = await sandbox.balanceOf(buyer.address);
    const generationsBefore = upstream.generations;
    const hangingBefore = upstream.hanging;
    upstream.holding = true;
    const request = postJson(`${doomed.url}/api/v1/ai/chat`, body, { 'X-Network': 'base', 'X-PAYMENT': proof.header }).catch((error: unknown) => error);
    await waitFor('the generation to start upstream', async () => (upstream.hanging > hangingBefore ? true : undefined));
    await doomed.kill();
    assert.ok((await request) instanceof Error);
    upstream.holding = false;

    // a client retrying on 409 through the load balancer: both survivors answer 409 until the dead holder's
    // lease (10 s) runs out, then one of them takes the reservation over; far below abandonedAfterMs (10 min)
    let turn = 0;
    const served = await waitFor(
      'a retry of the same proof to be served',
      async () => {
        const instance = turn++ % 2 === 0 ? a : b;
        const response = await postJson(`${instance.url}/api/v1/ai/chat`, body, { 'X-Network': 'base', 'X-PAYMENT': proof.header });
        return response.status === 409 ? undefined : { status: response.status, text: await response.text() };
      },
      45_000,
    );
    assert.equal(served.status, 200, served.text);
    assert.equal(upstream.generations - generationsBefore, 1, 'the model ran once after the crash');
    assert.equal(await sandbox.balanceOf(buyer.address), balanceBefore - proof.price, 'charged exactly once');
    assert.equal((await ledger.get(proof.key))?.state, 'settled');
  });
});

describe('a settlement transaction lost with the instance that sent it', () => {
  /** The shared ledger's nonce counter of the settlement key (the next nonce it hands out). */
  async function sharedCounter(): Promise<number | undefined> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ next_nonce: string | null }>('SELECT next_nonce FROM settlement_nonces');
      return rows[0]?.next_nonce == null ? undefined : Number(rows[0].next_nonce);
    } finally {
      await client.end();
    }
  }

  test('the survivor fills the nonce gap with a no-op: its payments all end 200 settled once, the dead payment charges nothing', async () => {
    const rpc = anvilRpc(sandbox.rpcUrl);
    const chain = createPublicClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl) });
    // the dead instance's authorization expires soon, so its payment's end is seen here, on the real clock
    const doomed = await startInstance({ maxTimeoutSeconds: { chat: 20, image: 120, speech: 60 } });
    // the survivor waits for its receipts as long as the test may take, so its clients get their 200s
    const survivor = await startInstance({ settlementTimeoutMs: 120_000 });
    const deadPayer = await fundedBuyer();
    const buyers = [await fundedBuyer(), await fundedBuyer()];
    const proofs: Awaited<ReturnType<typeof signedProof>>[] = [];
    for (let i = 0; i < 6; i++) proofs.push(await signedProof(survivor, CHAT, buyers[i % buyers.length]!));
    const before = await Promise.all([deadPayer, ...buyers].map((buyer) => sandbox.balanceOf(buyer.address)));
    const payToBefore = await sandbox.balanceOf(sandbox.payTo);

    // the doomed instance broadcasts its settlement and has the shared counter moved past its nonce, then dies
    const deadProof = await signedProof(doomed, CHAT, deadPayer); // signed last: it is valid for 20 s only
    await sandbox.setAutomine(false);
    let lost: { nonce: number; hash: Hex };
    try {
      const request = postJson(`${doomed.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': deadProof.header }).catch((error: unknown) => error);
      lost = await waitFor("the doomed instance's settlement in the node's pool", async () => {
        const [held] = await pooledTransactions(rpc, sandbox.settlementAddress);
        return held && { nonce: held[0], hash: held[1].hash };
      }, 60_000);
      await waitFor('the shared counter to move past it', async () => ((await sharedCounter()) === lost.nonce + 1 ? true : undefined), 60_000);
      await doomed.kill();
      assert.ok((await request) instanceof Error, 'its client never got an answer');
      // ...and the node loses the transaction: nobody alive has its bytes
      await rpc('anvil_dropTransaction', [lost.hash]);
      assert.equal((await pooledTransactions(rpc, sandbox.settlementAddress)).size, 0);
    } finally {
      await sandbox.setAutomine(true);
    }

    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        while (next < proofs.length) {
          const i = next++;
          const response = await postJson(`${survivor.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proofs[i]!.header });
          await response.arrayBuffer();
          statuses[i] = response.status;
        }
      }),
    );

    assert.deepEqual(statuses, proofs.map(() => 200), 'every payment to the survivor answered 200');
    const rows = await Promise.all(proofs.map((proof) => ledger.get(proof.key)));
    assert.ok(rows.every((row) => row?.state === 'settled'), 'every one settled');
    assert.equal(new Set(rows.map((row) => row?.txHash)).size, proofs.length, 'each in its own transaction');
    for (const [i, buyer] of buyers.entries()) {
      const paid = proofs.filter((_, n) => n % buyers.length === i).reduce((sum, proof) => sum + proof.price, 0n);
      assert.equal(await sandbox.balanceOf(buyer.address), before[i + 1]! - paid, 'each buyer charged exactly its proofs');
    }
    const total = proofs.reduce((sum, proof) => sum + proof.price, 0n);
    assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + total, 'payTo received exactly their total');

    // the lost nonce went to a transfer of nothing from the key to itself; the lost settlement can never be mined
    const filler = await transactionAtNonce(chain, sandbox.settlementAddress, lost.nonce);
    assert.notEqual(filler.hash, lost.hash);
    assert.equal(filler.to?.toLowerCase(), sandbox.settlementAddress.toLowerCase());
    assert.equal(filler.value, 0n);
    assert.equal(filler.input, '0x');
    await assert.rejects(chain.getTransactionReceipt({ hash: lost.hash }));

    // the dead instance's payer is charged nothing; once its authorization expires unused, the payment fails
    const authorization = (deadProof.payment.payload as EvmExactPayload).authorization;
    const failed = await waitFor(
      'the dead payment to be reconciled as failed',
      async () => {
        await sandbox.mine(); // a block now and then, so the chain's clock passes the authorization's deadline
        const row = await ledger.get(deadProof.key);
        return row?.state === 'failed' ? row : undefined;
      },
      90_000,
    );
    assert.equal(failed.error, 'invalid_exact_evm_payload_authorization_valid_before');
    assert.equal(await sandbox.balanceOf(deadPayer.address), before[0], 'the dead payment charged nothing');
    const used = await chain.readContract({
      address: sandbox.asset,
      abi: eip3009Abi,
      functionName: 'authorizationState',
      args: [deadPayer.address, authorization.nonce as Hex],
    });
    assert.equal(used, false, 'its authorization was never used');
  });
});

/** The transaction `from` sent with `nonce`, found in the latest blocks (those mined since the test began). */
async function transactionAtNonce(chain: ReturnType<typeof createPublicClient>, from: Hex, nonce: number) {
  const latest = await chain.getBlockNumber();
  for (let number = latest; number >= 0n; number--) {
    const block = await chain.getBlock({ blockNumber: number, includeTransactions: true });
    const found = block.transactions.find((tx) => tx.from.toLowerCase() === from.toLowerCase() && tx.nonce === nonce);
    if (found) return found;
  }
  throw new Error(`no transaction of ${from} with nonce ${nonce}`);
}
