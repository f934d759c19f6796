// Two instances on one PostgreSQL ledger share payment channels: the official client's calls on 10 channels,
// 100 voucher calls at once across both instances (each channel's calls alternate between them), every charge
// committed once; one voucher sent to both instances at the same moment is charged once (one result, to both); the
// two claimers claim every channel once. Real chain (sandbox anvil), real PostgreSQL, balances on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementEvmScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { loadConfig } from '../src/config/load.ts';
import { startService, type RunningService } from '../src/service.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import { startPostgres, type PostgresServer } from './support/postgres.ts';
import { localEvmNetwork } from './support/local-rail.ts';
import { channelOf, ESCROW_ABI } from './support/channels.ts';
import { decodeHeader as decode } from './support/sandbox-wallet.ts';

const KEY_ENV = 'CHANNELS_PG_TEST_KEY';
const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };

let postgres: PostgresServer;
let sandbox: EvmSandbox;
let a: RunningService;
let b: RunningService;
const dirs: string[] = [];

async function instance(databaseUrl: string): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-channels-pg-'));
  dirs.push(dataDir);
  const config = loadConfig(
    { [KEY_ENV]: sandbox.settlementPrivateKey },
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logLevel: 'silent',
      databaseUrl,
      publicUrl: 'http://gateway.test',
      networks: {
        base: localEvmNetwork(sandbox, KEY_ENV),
      },
      // rounds are run by the test; the timer stays out of the way
      channels: { claimIntervalMs: 800_000, claimThreshold: '1000000000000', claimMaxAgeMs: 60_000 },
    },
  );
  return startService(config);
}

before(async () => {
  [postgres, sandbox] = await Promise.all([startPostgres(), startEvmSandbox(NETWORKS.base as EvmNetwork)]);
  const databaseUrl = await postgres.createDatabase();
  // the rails read the settlement key from the environment
  process.env[KEY_ENV] = sandbox.settlementPrivateKey;
  [a, b] = await Promise.all([instance(databaseUrl), instance(databaseUrl)]);
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await sandbox?.stop();
  await postgres?.stop();
  delete process.env[KEY_ENV];
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const chain = () => createPublicClient({ transport: http(sandbox.rpcUrl) });

interface Payer {
  account: PrivateKeyAccount;
  channelId: Hex;
  pay(on: RunningService): Promise<bigint>;
}

async function payer(): Promise<Payer> {
  const account = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(account.address, 10_000_000n);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain()), { depositStrategy: () => '2000000' });
  const paying = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  const { channelId } = channelOf(a.rails.get('base')!, account.address);
  return {
    account,
    channelId,
    async pay(on) {
      const response = await paying(`${on.url}${IMAGE.path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
        body: JSON.stringify(IMAGE.body),
      });
      assert.equal(response.status, 200, await response.clone().text());
      await response.arrayBuffer();
      return BigInt(decode(response.headers.get('PAYMENT-RESPONSE')).extra.chargedAmount);
    },
  };
}

test('100 voucher calls on 10 channels across two instances: every charge committed once, claimed once', async () => {
  const payers = await Promise.all(Array.from({ length: 10 }, () => payer()));
  const charged = new Map<Hex, bigint>();
  // the deposits, one per channel
  for (const [i, p] of payers.entries()) charged.set(p.channelId, await p.pay(i % 2 === 0 ? a : b));
  const afterDeposits = await chain().getBlockNumber();

  // then 10 vouchers per channel, all channels at once, each channel's calls alternating between the instances
  await Promise.all(
    payers.map(async (p, i) => {
      for (let call = 0; call < 10; call++) {
        const on = (i + call) % 2 === 0 ? a : b;
        charged.set(p.channelId, charged.get(p.channelId)! + (await p.pay(on)));
      }
    }),
  );
  assert.equal(await chain().getBlockNumber(), afterDeposits, 'vouchers send no transaction');
  for (const p of payers) {
    const record = await a.ledger.channels!.get(p.channelId);
    assert.equal(record?.chargedCumulative, charged.get(p.channelId), 'the shared ledger holds each charge once');
  }

  // both claimers at once: one claims every channel, in one transaction
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);
  const reports = (await Promise.all([a.claimer!.round({ force: true }), b.claimer!.round({ force: true })])).flat();
  const claims = reports.flatMap((report) => report.claimTransactions);
  assert.equal(claims.length, 1, 'one claim transaction for the ten channels');
  let total = 0n;
  for (const p of payers) {
    const [, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'channels', args: [p.channelId] });
    assert.equal(totalClaimed, charged.get(p.channelId));
    total += totalClaimed;
  }
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + total, 'the payee received every charge, once');
});

test('one voucher sent to both instances at the same moment is charged once: the second gets the kept result, another request the corrective 402', async () => {
  const p = await payer();
  await p.pay(a);
  const before = (await a.ledger.channels!.get(p.channelId))!;
  // the next voucher, as the client signs it: the charged amount so far plus the price
  const quote = await fetch(`${a.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  const accepted = decode(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((offer: { scheme: string }) => offer.scheme === 'batch-settlement');
  const ceiling = before.chargedCumulative + BigInt(accepted.amount);
  const voucher = await signVoucher(toClientEvmSigner(p.account, chain()), p.channelId, ceiling.toString(), 'eip155:8453');
  const header = Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload: { type: 'voucher', channelConfig: before.config, voucher } })).toString('base64');
  const send = (on: RunningService) =>
    fetch(`${on.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base', 'PAYMENT-SIGNATURE': header }, body: JSON.stringify(IMAGE.body) });
  const answers = await Promise.all([send(a), send(b)]);
  assert.deepEqual(answers.map((r) => r.status), [200, 200]);
  const [first, second] = await Promise.all(answers.map((r) => r.text()));
  assert.equal(second, first, 'one result, the same to both');
  const receipts = answers.map((r) => decode(r.headers.get('PAYMENT-RESPONSE')));
  assert.deepEqual(receipts.map((r) => r.extra.chargedAmount), [accepted.amount, accepted.amount]);
  const after = (await b.ledger.channels!.get(p.channelId))!;
  assert.equal(after.chargedCumulative, before.chargedCumulative + BigInt(accepted.amount), 'charged once');

  // the same voucher for another request pays for nothing: the corrective 402, the channel as it was
  const other = await fetch(`${b.url}${IMAGE.path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base', 'PAYMENT-SIGNATURE': header },
    body: JSON.stringify({ ...IMAGE.body, prompt: 'a blue fox' }),
  });
  assert.equal(other.status, 402);
  assert.equal(decode(other.headers.get('PAYMENT-REQUIRED')).error, 'invalid_batch_settlement_evm_cumulative_amount_mismatch');
  assert.equal((await a.ledger.channels!.get(p.channelId))!.chargedCumulative, after.chargedCumulative);
});
