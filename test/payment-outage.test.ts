// Outages of what a payment needs (the chain's RPC, the ledger's PostgreSQL) say nothing about the payment, whose
// authorization stays valid and unused:
//   - before anything is delivered (verification, or settling a plain answer) the answer is 503 with Retry-After
//     and nothing is charged, never a 402 that tells an x402 client to pay again; the same proof is honoured once
//     the outage is over;
//   - a stream's answer is with its client before its payment settles (after the last token): its payment stays
//     pending and is settled once the RPC or the database is back, never given away (the audit saw 54-58 of 60
//     streams per run delivered whole and charged nothing).
// Each gateway is fresh (no fee or nonce read from the chain yet, as after a long cut), its upstream holds the
// answer until the outage has begun. After each outage, on-chain: whoever got a 200 is charged exactly once,
// nobody else is charged, the payee gets exactly the sum, and the same proof then gets its kept result.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { startTestService, postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { startRpcProxy, type RpcProxy } from './support/rpc-proxy.ts';
import { startPostgres, type PostgresServer } from './support/postgres.ts';
import { CHAT_PATH, CHAT_TEXT, OpenAIUpstream, upstreamChatConfig } from './support/openai-upstream.ts';
import { sseData, until } from './support/sse.ts';

const base = NETWORKS.base as EvmNetwork;
const KEY_ENV = 'X402_STREAM_OUTAGE_TEST_KEY';
const STREAMS = 3;
const CHAT = { model: 'up/chat', messages: [{ role: 'user', content: 'Tell me about the sea' }], stream: true, max_tokens: 16 };
/** the upstream's events before its finish: the role, then one per word */
const TEXT_EVENTS = 1 + CHAT_TEXT.split(/(?<= )/).length;

let sandbox: EvmSandbox;
let upstream: OpenAIUpstream;
let postgres: PostgresServer;
const cleanup: (() => Promise<void>)[] = [];

before(async () => {
  [sandbox, upstream, postgres] = await Promise.all([startEvmSandbox(base), new OpenAIUpstream().start(), startPostgres()]);
  process.env[KEY_ENV] = sandbox.settlementPrivateKey;
});

after(async () => {
  for (const stop of cleanup.reverse()) await stop();
  await upstream?.close();
  await sandbox?.stop();
  await postgres?.stop();
  delete process.env[KEY_ENV];
});

async function gateway(rpcUrl: string, databaseUrl?: string): Promise<RunningService> {
  const service = await startTestService({
    config: {
      sandbox: { enabled: false },
      ...(databaseUrl ? { databaseUrl } : {}),
      networks: {
        base: { payTo: sandbox.payTo, asset: sandbox.asset, eip712: sandbox.eip712, facilitator: { type: 'local', rpcUrl, secretKeyEnv: KEY_ENV } },
      },
      settlementTimeoutMs: 2_000,
      reconcileIntervalMs: 200,
      ...upstreamChatConfig(upstream.baseURL, { timeoutMs: 30_000 }),
    },
  });
  cleanup.push(() => service.stop());
  return service;
}

interface Buyer {
  account: PrivateKeyAccount;
  proof: string;
  before: bigint;
  /** the stream's text, and its last event */
  text: string;
  last?: { code?: string; x402?: unknown; error?: { code?: string } };
}

/** A gateway whose chain RPC passes through a proxy the test can cut (`proxy.down`). */
async function gatewayWithCuttableRpc(): Promise<{ proxy: RpcProxy; service: RunningService }> {
  const proxy = await startRpcProxy(sandbox.rpcUrl);
  cleanup.push(() => proxy.close());
  return { proxy, service: await gateway(proxy.url) };
}

async function buyers(service: RunningService, body: unknown = CHAT, count = STREAMS): Promise<{ buyers: Buyer[]; price: bigint }> {
  const quote = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  assert.equal(requirement.scheme, 'exact');
  const list: Buyer[] = [];
  for (let i = 0; i < count; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    await sandbox.faucet(account.address, 1_000_000n);
    list.push({ account, proof: await signEvmProof(account, requirement, base.chainId), before: await sandbox.balanceOf(account.address), text: '' });
  }
  return { buyers: list, price: BigInt(requirement.maxAmountRequired) };
}

/**
 * Opens every buyer's stream, reads each until its whole text is in, runs `outage` while the upstreams hold their
 * last event, then lets them finish and reads each stream to its end.
 */
async function streamThrough(service: RunningService, list: Buyer[], outage: () => Promise<void>): Promise<void> {
  upstream.reset();
  upstream.fail(CHAT_PATH, { kind: 'stream-hold', afterChunks: TEXT_EVENTS }, STREAMS);
  const readers = list.map(async (buyer) => {
    const response = await postJson(`${service.url}/v1/chat/completions`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': buyer.proof });
    assert.equal(response.status, 200);
    const events = sseData(response);
    for await (const data of events) {
      if (data === '[DONE]') continue;
      const event = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] } & Buyer['last'];
      buyer.text += event.choices?.[0]?.delta?.content ?? '';
      buyer.last = event;
    }
  });
  await until('every stream to have its whole text', () => upstream.streamsHolding === STREAMS && list.every((buyer) => buyer.text === CHAT_TEXT));
  await outage();
  await Promise.all(readers);
}

/** The same proof, sent again once the outage is over: 200, charged exactly once, the payee paid exactly that. */
async function paidOnceWithTheSameProof(service: RunningService, buyer: Buyer, price: bigint, payToBefore: bigint): Promise<void> {
  upstream.reset();
  const served = await postJson(`${service.url}/v1/chat/completions`, { ...CHAT, stream: false }, { 'X-Network': 'base', 'X-PAYMENT': buyer.proof });
  assert.equal(served.status, 200, await served.clone().text());
  assert.equal(((await served.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, CHAT_TEXT);
  assert.equal(await sandbox.balanceOf(buyer.account.address), buyer.before - price, 'charged exactly once');
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + price);
}

/** Once the outage is over: each delivered stream charged exactly once, on-chain; the payee got exactly the sum. */
async function assertEveryStreamCharged(service: RunningService, list: Buyer[], price: bigint, payToBefore: bigint): Promise<void> {
  for (const buyer of list) assert.equal(buyer.text, CHAT_TEXT, 'the stream was delivered whole');
  await until('every delivered stream to be charged', async () => {
    const balances = await Promise.all(list.map((buyer) => sandbox.balanceOf(buyer.account.address)));
    return balances.every((balance, i) => balance === list[i]!.before - price);
  });
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + price * BigInt(list.length), 'the payee got exactly what was charged');
  for (const buyer of list) {
    // the same proof: the kept result, charged once (no second transfer). The transfer can be on chain before the
    // ledger has its confirmation: until then the answer is a 409 that says to send the same again, as a client does
    await until('the kept result for the same proof', async () => {
      const again = await postJson(`${service.url}/v1/chat/completions`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': buyer.proof });
      const text = await again.text();
      const code = again.status === 409 ? (JSON.parse(text) as { error?: { code?: string } }).error?.code : undefined;
      if (code === 'settlement_pending' || code === 'payment_in_progress') return false;
      assert.equal(again.status, 200, text.slice(0, 300));
      return true;
    });
    assert.equal(await sandbox.balanceOf(buyer.account.address), buyer.before - price, 'charged once');
  }
}

test('the RPC down at verification: 503 with Retry-After, nothing charged; the same proof once it is back: 200, charged once', async () => {
  const { proxy, service } = await gatewayWithCuttableRpc();
  const { buyers: [buyer], price } = await buyers(service, { ...CHAT, stream: false }, 1);
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);

  proxy.down = true;
  const refused = await postJson(`${service.url}/v1/chat/completions`, { ...CHAT, stream: false }, { 'X-Network': 'base', 'X-PAYMENT': buyer!.proof });
  assert.equal(refused.status, 503, (await refused.clone().text()).slice(0, 300));
  assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to come back');
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /nothing was charged/);
  proxy.down = false;
  assert.equal(upstream.received(CHAT_PATH).length, 0, 'no work ran for an unverified payment');

  await paidOnceWithTheSameProof(service, buyer!, price, payToBefore);
});

test('the RPC cut between the work and its settlement: 503, nothing charged; the same proof once it is back: 200, charged once', async () => {
  const { proxy, service } = await gatewayWithCuttableRpc();
  const { buyers: [buyer], price } = await buyers(service, { ...CHAT, stream: false }, 1);
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);

  upstream.reset();
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const answering = postJson(`${service.url}/v1/chat/completions`, { ...CHAT, stream: false }, { 'X-Network': 'base', 'X-PAYMENT': buyer!.proof });
  await until('the paid work to be running', () => upstream.received(CHAT_PATH).length === 1);
  proxy.down = true;
  upstream.release();
  const refused = await answering;
  assert.equal(refused.status, 503, (await refused.clone().text()).slice(0, 300));
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  await refused.arrayBuffer();
  proxy.down = false;
  assert.equal(await sandbox.balanceOf(buyer!.account.address), buyer!.before, 'nothing charged for the withheld answer');

  await paidOnceWithTheSameProof(service, buyer!, price, payToBefore);
});

test('the RPC cut while delivered streams settle: they stay pending and are settled once it is back', async () => {
  const { proxy, service } = await gatewayWithCuttableRpc();
  const { buyers: list, price } = await buyers(service);
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);

  await streamThrough(service, list, async () => {
    proxy.down = true;
    upstream.release();
  });
  for (const buyer of list) {
    const code = buyer.last?.error?.code ?? buyer.last?.code;
    assert.equal(code, 'settlement_pending', `the stream says its payment is pending, not failed: ${JSON.stringify(buyer.last)}`);
  }
  proxy.down = false;
  await assertEveryStreamCharged(service, list, price, payToBefore);
});

test('PostgreSQL restarting while delivered streams settle: they are settled once it is back', async () => {
  const service = await gateway(sandbox.rpcUrl, await postgres.createDatabase());
  const { buyers: list, price } = await buyers(service);
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);

  await streamThrough(service, list, async () => {
    await postgres.halt();
    upstream.release();
  });
  for (const buyer of list) {
    const code = buyer.last?.error?.code ?? buyer.last?.code;
    assert.equal(code, 'settlement_pending', `the stream says its payment is pending: ${JSON.stringify(buyer.last)}`);
  }
  await postgres.resume();
  await assertEveryStreamCharged(service, list, price, payToBefore);
});
