// Payment channels across instances sharing one PostgreSQL ledger, under faults (issue 36, items 8 and 4): a
// channel's lock has a short lease kept alive by a heartbeat, so an instance killed mid-call frees the channel in
// seconds (it held it for 5 minutes), and a request behind a live one hears 409 in seconds (it waited 30 s). A
// database restart while a call's work runs charges nothing for it; the call paid again is charged once. Real
// chain (sandbox anvil), real PostgreSQL, the official client; after each test the on-chain account.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { loadConfig } from '../src/config/load.ts';
import { startService, type RunningService } from '../src/service.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { startPostgres, type PostgresServer } from './support/postgres.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { localEvmNetwork } from './support/local-rail.ts';
import { CHAT_PATH, startOpenAIUpstream, upstreamChatConfig, type OpenAIUpstream } from './support/openai-upstream.ts';
import { until } from './support/sse.ts';
import { accountFor, channelOf, officialChannelPayer } from './support/channels.ts';

const KEY_ENV = 'CHANNEL_INSTANCES_TEST_KEY';
const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };
const chat = (prompt: string) => ({ path: '/api/v1/ai/chat', body: { model: 'up/chat', prompt } });
const FUNDS = 10_000_000n;

let postgres: PostgresServer;
let sandbox: EvmSandbox;
let upstream: OpenAIUpstream;
let databaseUrl: string;
let b: RunningService;
let c: RunningService;
const dirs: string[] = [];

/** What every instance runs with: the sandbox chain as a configured network, the shared ledger, a chat model we hold. */
function settings() {
  const up = upstreamChatConfig(upstream.baseURL, { timeoutMs: 60_000, price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } });
  return {
    logLevel: 'silent',
    databaseUrl,
    publicUrl: 'http://gateway.test',
    networks: { base: localEvmNetwork(sandbox, KEY_ENV) },
    // rounds are run by the test
    channels: { claimIntervalMs: 800_000, claimThreshold: '1000000000000', claimMaxAgeMs: 60_000 },
    providers: up.providers,
    models: [...embeddedModels(), ...up.models],
  };
}

async function instance(): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-channel-instances-'));
  dirs.push(dataDir);
  return startService(loadConfig({ [KEY_ENV]: sandbox.settlementPrivateKey }, { ...settings(), host: '127.0.0.1', port: 0, dataDir }));
}

/** An instance in its own process, to be killed mid-call. */
const killable = (): Promise<ChildService> => startChildService(settings(), { [KEY_ENV]: sandbox.settlementPrivateKey });

before(async () => {
  [postgres, sandbox, upstream] = await Promise.all([startPostgres(), startEvmSandbox(NETWORKS.base as EvmNetwork), startOpenAIUpstream()]);
  databaseUrl = await postgres.createDatabase();
  process.env[KEY_ENV] = sandbox.settlementPrivateKey;
  [b, c] = await Promise.all([instance(), instance()]);
});

after(async () => {
  await Promise.all([b?.stop(), c?.stop()]);
  await Promise.all([sandbox?.stop(), upstream?.close()]);
  await postgres?.stop();
  delete process.env[KEY_ENV];
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const chain = () => createPublicClient({ transport: http(sandbox.rpcUrl) });
const decode = (header: string | null): any => JSON.parse(Buffer.from(header!, 'base64').toString('utf8'));
const chatRequests = () => upstream.requests.filter((r) => r.path === CHAT_PATH).length;

const channel = (buyer: PrivateKeyAccount) => channelOf(b.rails.get('base')!, buyer.address);

/** A funded payer and its official client; every 200's charge is kept in `charges`. */
async function payer() {
  const account = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(account.address, FUNDS);
  const { charges, pay } = officialChannelPayer(account, sandbox.rpcUrl, 2_000_000n);
  return { account, charges, pay: (on: { url: string }, endpoint: { path: string; body: unknown }, signal?: AbortSignal) => pay(on.url, endpoint, signal) };
}

const settleUp = (buyer: PrivateKeyAccount, charges: bigint[]) =>
  accountFor({ rail: b.rails.get('base')!, rpcUrl: sandbox.rpcUrl, store: b.ledger.channels!, claimer: b.claimer!, funds: FUNDS }, buyer.address, charges);

test('an instance killed mid-call frees the channel within its lock lease: the call paid again on another is served, charged once', async () => {
  const client = await payer();
  assert.equal((await client.pay(b, IMAGE)).status, 200, 'the deposit');
  const a = await killable();
  try {
    // the killed instance holds the channel while its model answers
    upstream.fail(CHAT_PATH, { kind: 'hold' });
    const asked = chatRequests();
    const lost = client.pay(a, chat('killed mid-call')).catch((error: unknown) => error);
    await until('the model to be asked', () => chatRequests() > asked);
    await a.kill();
    assert.ok((await lost) instanceof Error, 'the client got no answer');
  } finally {
    await a.kill();
    upstream.release();
  }
  // the client asks another instance, with the same voucher: the dead holder's lease runs out, and it is served
  const started = Date.now();
  const again = await client.pay(c, chat('killed mid-call'));
  const waited = Date.now() - started;
  assert.equal(again.status, 200, `served, not refused busy (${await again.clone().text()})`);
  assert.ok(waited < 20_000, `served in ${waited} ms, within a lock lease (5 s) rather than after 30 s`);
  await settleUp(client.account, client.charges);
});

test('a request behind a live one on the same channel hears 409 in seconds; the live one is served', async () => {
  const client = await payer();
  assert.equal((await client.pay(b, IMAGE)).status, 200, 'the deposit');
  const { config, channelId } = channel(client.account);
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const asked = chatRequests();
  const long = client.pay(b, chat('a long answer'));
  await until('the model to be asked', () => chatRequests() > asked);

  // another request on the channel, on another instance: the next voucher, as the client would sign it
  const quote = await fetch(`${c.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  const accepted = decode(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((offer: { scheme: string }) => offer.scheme === 'batch-settlement');
  const charged = (await b.ledger.channels!.get(channelId))!.chargedCumulative;
  const voucher = await signVoucher(toClientEvmSigner(client.account, chain()), channelId, (charged + BigInt(accepted.amount)).toString(), 'eip155:8453');
  const header = Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload: { type: 'voucher', channelConfig: config, voucher } })).toString('base64');
  const started = Date.now();
  const busy = await fetch(`${c.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base', 'PAYMENT-SIGNATURE': header }, body: JSON.stringify(IMAGE.body) });
  const waited = Date.now() - started;
  assert.equal(busy.status, 409);
  assert.equal(((await busy.json()) as { code: string }).code, 'payment_in_progress');
  assert.ok(busy.headers.get('retry-after'));
  assert.ok(waited < 20_000, `409 after ${waited} ms, not after 30 s`);
  // the held request kept its lock all along (its heartbeat), and is served
  upstream.release();
  assert.equal((await long).status, 200);
  await settleUp(client.account, client.charges);
});

test('a database restart while a call works: it is charged nothing, the instance lives on, and the call paid again is charged once', async () => {
  const client = await payer();
  assert.equal((await client.pay(b, IMAGE)).status, 200, 'the deposit');
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const asked = chatRequests();
  const during = client.pay(b, chat('across a restart'));
  await until('the model to be asked', () => chatRequests() > asked);
  await postgres.halt();
  upstream.release();
  const answered = await during;
  assert.equal(answered.status, 503, `the charge could not be written: ${await answered.clone().text()}`);
  await postgres.resume();
  const again = await client.pay(b, chat('across a restart'));
  assert.equal(again.status, 200, await again.clone().text());
  assert.equal((await fetch(`${c.url}/healthz`)).status, 200, 'the other instance lives on');
  await settleUp(client.account, client.charges);
});
