// Payment channels through a remote facilitator: the official x402 facilitator with @x402/evm's batch-settlement
// scheme over HTTP lists batch-settlement with its receiverAuthorizer in /supported; a gateway configured with it
// (no chain access of its own) offers channels with that authorizer, and the official client's deposit,
// vouchers, the claim and settle, and a refund all go through it. Real chain (sandbox anvil), balances on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementEvmScheme, computeChannelId } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http, parseAbi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { loadConfig } from '../src/config/load.ts';
import { startService, type RunningService } from '../src/service.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import { startOfficialChannelFacilitator, type OfficialChannelFacilitator } from './support/official-channel-facilitator.ts';

const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };
const escrowAbi = parseAbi(['function channels(bytes32) view returns (uint128 balance, uint128 totalClaimed)']);

let sandbox: EvmSandbox;
let official: OfficialChannelFacilitator;
let gateway: RunningService;
let dataDir: string;

before(async () => {
  sandbox = await startEvmSandbox(NETWORKS.base as EvmNetwork);
  const key = generatePrivateKey();
  await sandbox.faucet(privateKeyToAccount(key).address, 1n); // its gas
  official = await startOfficialChannelFacilitator({ rpcUrl: sandbox.rpcUrl, chainId: sandbox.chainId, privateKey: key });
  dataDir = mkdtempSync(join(tmpdir(), 'x402-channels-remote-'));
  gateway = await startService(
    loadConfig({}, {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logLevel: 'silent',
      networks: { base: { payTo: sandbox.payTo, asset: sandbox.asset, eip712: sandbox.eip712, facilitator: { type: 'remote', url: official.url, timeoutMs: 20_000 } } },
      channels: { claimIntervalMs: 800_000, claimThreshold: '1000000000000', claimMaxAgeMs: 60_000 },
    }),
  );
});

after(async () => {
  await gateway?.stop();
  await official?.stop();
  await sandbox?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const chain = () => createPublicClient({ transport: http(sandbox.rpcUrl) });
const decode = (header: string | null): any => JSON.parse(Buffer.from(header!, 'base64').toString('utf8'));

test("a remote facilitator's receiverAuthorizer is offered, and deposit, vouchers, claim, settle and refund go through it", async () => {
  const quote = await fetch(`${gateway.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  const offer = decode(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
  assert.equal(offer.extra.receiverAuthorizer, official.authorizer, 'receiver authorization delegated to the facilitator');

  const buyer = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(buyer.address, 10_000_000n);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain()), { depositStrategy: () => '2000000' });
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  let charged = 0n;
  for (let i = 0; i < 4; i++) {
    const response = await pay(`${gateway.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
    assert.equal(response.status, 200, await response.clone().text());
    const receipt = decode(response.headers.get('PAYMENT-RESPONSE'));
    assert.equal(receipt.transaction === '', i > 0, i === 0 ? 'the first call deposits' : 'vouchers send nothing');
    charged += BigInt(receipt.extra.chargedAmount);
  }
  assert.deepEqual(official.settled, ['deposit'], 'one settle at the facilitator: the deposit');

  const channelId = computeChannelId(
    { payer: buyer.address, payerAuthorizer: buyer.address, receiver: sandbox.payTo, receiverAuthorizer: official.authorizer, token: sandbox.asset, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` },
    8453,
  ) as Hex;
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);
  const [report] = await gateway.claimer!.round({ force: true });
  assert.equal(report!.claimTransactions.length, 1);
  assert.ok(report!.settleTransaction);
  const [, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: escrowAbi, functionName: 'channels', args: [channelId] });
  assert.equal(totalClaimed, charged);
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + charged);

  const walletBefore = await sandbox.balanceOf(buyer.address);
  const withNetwork: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-Network': 'base' } });
  const refund = await scheme.refund(`${gateway.url}${IMAGE.path}`, { fetch: withNetwork });
  assert.equal(refund.success, true);
  assert.equal(await sandbox.balanceOf(buyer.address), walletBefore + 2_000_000n - charged);
  assert.deepEqual(official.settled, ['deposit', 'claim', 'settle', 'refund']);
});
