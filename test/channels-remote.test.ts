// Payment channels through a remote facilitator: the official x402 facilitator with @x402/evm's batch-settlement
// scheme over HTTP lists batch-settlement in /supported. Receiver authorization delegated: it lists its own
// receiverAuthorizer, which the gateway (no chain access of its own) offers; kept: it lists none, the gateway's
// configured key is the receiverAuthorizer and signs claims and refunds. Either way the official client's
// deposit, vouchers, the claim and settle, and a refund all go through it. Real chain (sandbox anvil), balances on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementEvmScheme, computeChannelId } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { loadConfig } from '../src/config/load.ts';
import { startService, type RunningService } from '../src/service.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import { startOfficialChannelFacilitator, type OfficialChannelFacilitator } from './support/official-channel-facilitator.ts';
import { decodeHeader as decode } from './support/sandbox-wallet.ts';
import { ESCROW_ABI } from './support/channels.ts';

const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };

let sandbox: EvmSandbox;
const stops: (() => Promise<void>)[] = [];

before(async () => {
  sandbox = await startEvmSandbox(NETWORKS.base as EvmNetwork);
});

after(async () => {
  for (const stop of stops.reverse()) await stop();
  await sandbox?.stop();
});

/** The official facilitator (delegated or not) and a gateway using it; `receiverKey` set: authorization kept. */
async function gatewayWithRemoteChannels(options: { delegated: boolean; receiverKey?: Hex }): Promise<{ gateway: RunningService; official: OfficialChannelFacilitator }> {
  const key = generatePrivateKey();
  await sandbox.faucet(privateKeyToAccount(key).address, 1n); // its gas
  const official = await startOfficialChannelFacilitator({ rpcUrl: sandbox.rpcUrl, chainId: sandbox.chainId, privateKey: key, delegated: options.delegated });
  stops.push(() => official.stop());
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-channels-remote-'));
  stops.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const facilitator = { type: 'remote', url: official.url, timeoutMs: 20_000, ...(options.receiverKey ? { receiverAuthorizerKeyEnv: 'TEST_RECEIVER_AUTHORIZER_KEY' } : {}) } as const;
  // the key is read from the environment, as an operator gives it
  if (options.receiverKey) process.env.TEST_RECEIVER_AUTHORIZER_KEY = options.receiverKey;
  const gateway = await startService(
    loadConfig({}, {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logLevel: 'silent',
      networks: { base: { payTo: sandbox.payTo, asset: sandbox.asset, eip712: sandbox.eip712, facilitator } },
      channels: { claimIntervalMs: 800_000, claimThreshold: '1000000000000', claimMaxAgeMs: 60_000 },
    }),
  ).finally(() => delete process.env.TEST_RECEIVER_AUTHORIZER_KEY);
  stops.push(() => gateway.stop());
  return { gateway, official };
}

const chain = () => createPublicClient({ transport: http(sandbox.rpcUrl) });

/**
 * The official client deposits and pays 4 vouchers; the client refunds the rest, either after the gateway claimed
 * and settled, or before (the refund then carries the claim of what was charged, which the next round settles).
 */
async function payClaimAndRefund(gateway: RunningService, official: OfficialChannelFacilitator, receiverAuthorizer: Address, order: 'claim first' | 'refund first'): Promise<void> {
  const quote = await fetch(`${gateway.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  const offer = decode(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
  assert.equal(offer.extra.receiverAuthorizer, receiverAuthorizer);
  const buyer = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(buyer.address, 10_000_000n);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain()), { depositStrategy: () => '2000000' });
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  const settledBefore = official.settled.length;
  let charged = 0n;
  for (let i = 0; i < 4; i++) {
    const response = await pay(`${gateway.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
    assert.equal(response.status, 200, await response.clone().text());
    const receipt = decode(response.headers.get('PAYMENT-RESPONSE'));
    assert.equal(receipt.transaction === '', i > 0, i === 0 ? 'the first call deposits' : 'vouchers send nothing');
    charged += BigInt(receipt.extra.chargedAmount);
  }
  assert.deepEqual(official.settled.slice(settledBefore), ['deposit'], 'one settle at the facilitator: the deposit');

  const channelId = computeChannelId(
    { payer: buyer.address, payerAuthorizer: buyer.address, receiver: sandbox.payTo, receiverAuthorizer, token: sandbox.asset, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` },
    8453,
  ) as Hex;
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);
  const claimAndSettle = async () => {
    const [report] = await gateway.claimer!.round({ force: true });
    assert.ok(report!.settleTransaction);
    return report!;
  };
  if (order === 'claim first') assert.equal((await claimAndSettle()).claimTransactions.length, 1);

  const walletBefore = await sandbox.balanceOf(buyer.address);
  const withNetwork: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-Network': 'base' } });
  const refund = await scheme.refund(`${gateway.url}${IMAGE.path}`, { fetch: withNetwork });
  assert.equal(refund.success, true);
  assert.equal(await sandbox.balanceOf(buyer.address), walletBefore + 2_000_000n - charged);
  if (order === 'refund first') await claimAndSettle(); // the refund claimed the charges: this round settles them
  const [, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'channels', args: [channelId] });
  assert.equal(totalClaimed, charged);
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + charged);
  assert.deepEqual(official.settled.slice(settledBefore), order === 'claim first' ? ['deposit', 'claim', 'settle', 'refund'] : ['deposit', 'refund', 'settle']);
}

test("delegated: the facilitator's receiverAuthorizer is offered, and deposit, vouchers, claim, settle and refund go through it", async () => {
  const { gateway, official } = await gatewayWithRemoteChannels({ delegated: true });
  await payClaimAndRefund(gateway, official, official.authorizer!, 'claim first');
});

test("kept: the gateway's own key is the receiverAuthorizer and signs the claims and refunds (with their claim) the facilitator submits", async () => {
  const receiverKey = generatePrivateKey();
  const { gateway, official } = await gatewayWithRemoteChannels({ delegated: false, receiverKey });
  assert.equal(official.authorizer, undefined, 'the facilitator lists no receiverAuthorizer');
  await payClaimAndRefund(gateway, official, privateKeyToAccount(receiverKey).address, 'claim first');
  await payClaimAndRefund(gateway, official, privateKeyToAccount(receiverKey).address, 'refund first');
});

test('a kept receiver authorizer key that is not a key stops startup, naming its variable', async () => {
  await assert.rejects(gatewayWithRemoteChannels({ delegated: false, receiverKey: '0x1234' }), /TEST_RECEIVER_AUTHORIZER_KEY must be a 0x-prefixed 32-byte hex private key/);
});
