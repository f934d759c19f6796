// The sandbox's batch-settlement escrow answers the official @x402/evm 2.27 client and facilitator as the
// deployed x402BatchSettlement does: the client signs a deposit and vouchers for the canonical address, the
// official facilitator verifies and submits the deposit, claims vouchers of several channels in one
// claimWithSignature, settles to the receiver and refunds; the payer's timed withdrawal works after its delay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createPublicClient, createTestClient, createWalletClient, http, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { toClientEvmSigner } from '@x402/evm';
import {
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { NETWORKS, type EvmNetwork } from '../../x402/networks.ts';
import { startEvmSandbox, type EvmSandbox } from './evm-sandbox.ts';
import { BATCH_SETTLEMENT_PLACEMENT, loadBatchSettlementArtifact } from './batch-settlement-contracts.ts';
import { officialEvmSigner } from '../../../test/support/official-evm-signer.ts';

const network = NETWORKS.polygon as EvmNetwork;
const caip2 = `eip155:${network.chainId}` as const;
const escrow = BATCH_SETTLEMENT_PLACEMENT.X402BatchSettlement;
const WITHDRAW_DELAY = 900;
const ZERO_SALT = `0x${'00'.repeat(32)}` as Hex;

let sandbox: EvmSandbox;
let facilitator: BatchSettlementEvmScheme;
let authorizer: PrivateKeyAccount;
let client: ReturnType<typeof createPublicClient>;
const { abi } = loadBatchSettlementArtifact().contracts.X402BatchSettlement;

before(async () => {
  sandbox = await startEvmSandbox(network);
  authorizer = privateKeyToAccount(generatePrivateKey());
  const relayer = privateKeyToAccount(sandbox.settlementPrivateKey);
  facilitator = new BatchSettlementEvmScheme(
    officialEvmSigner({ rpcUrl: sandbox.rpcUrl, chainId: network.chainId, account: relayer }),
    authorizer,
  );
  client = createPublicClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl) });
});
after(() => sandbox.stop());

function requirements(amount: bigint): PaymentRequirements {
  return {
    scheme: 'batch-settlement',
    network: caip2,
    amount: amount.toString(),
    asset: sandbox.asset,
    payTo: sandbox.payTo,
    maxTimeoutSeconds: 300,
    extra: {
      receiverAuthorizer: authorizer.address,
      withdrawDelay: WITHDRAW_DELAY,
      name: sandbox.eip712.name,
      version: sandbox.eip712.version,
    },
  };
}

interface Payer {
  account: PrivateKeyAccount;
  signer: ReturnType<typeof toClientEvmSigner>;
  config: {
    payer: Address;
    payerAuthorizer: Address;
    receiver: Address;
    receiverAuthorizer: Address;
    token: Address;
    withdrawDelay: number;
    salt: Hex;
  };
  channelId: Hex;
}

async function fundedPayer(amount = 10_000_000n): Promise<Payer> {
  const account = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(account.address, amount);
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(sandbox.rpcUrl) }));
  const config = {
    payer: account.address,
    payerAuthorizer: account.address,
    receiver: sandbox.payTo,
    receiverAuthorizer: authorizer.address,
    token: sandbox.asset,
    withdrawDelay: WITHDRAW_DELAY,
    salt: ZERO_SALT,
  };
  return { account, signer, config, channelId: computeChannelId(config, caip2) };
}

const envelope = (accepted: PaymentRequirements, payload: Record<string, unknown>): PaymentPayload => ({
  x402Version: 2,
  accepted,
  payload,
});

async function deposit(payer: Payer, amount: bigint, firstVoucher: bigint) {
  const req = requirements(firstVoucher);
  const built = await createBatchSettlementEIP3009DepositPayload(
    payer.signer,
    2,
    req,
    payer.config,
    amount.toString(),
    firstVoucher.toString(),
  );
  const payment = envelope(req, built.payload as Record<string, unknown>);
  const verified = await facilitator.verify(payment, req);
  assert.equal(verified.isValid, true, verified.invalidReason);
  const settled = await facilitator.settle(payment, req);
  assert.equal(settled.success, true, settled.errorReason);
  await client.waitForTransactionReceipt({ hash: settled.transaction as Hex });
  return settled;
}

async function channel(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = (await client.readContract({
    address: escrow,
    abi,
    functionName: 'channels',
    args: [channelId],
  })) as [bigint, bigint];
  return { balance, totalClaimed };
}

async function claim(rows: { payer: Payer; cumulative: bigint }[]) {
  const claims = await Promise.all(
    rows.map(async ({ payer, cumulative }) => {
      const voucher = await signVoucher(payer.signer, payer.channelId, cumulative.toString(), caip2);
      return {
        voucher: { channel: payer.config, maxClaimableAmount: cumulative.toString() },
        signature: voucher.signature,
        totalClaimed: cumulative.toString(),
      };
    }),
  );
  const req = requirements(0n);
  return facilitator.settle(envelope(req, { type: 'claim', claims }), req);
}

test('the channel id the official client computes is the one the escrow computes', async () => {
  const payer = await fundedPayer(1n);
  const onChain = await client.readContract({ address: escrow, abi, functionName: 'getChannelId', args: [payer.config] });
  assert.equal(onChain, payer.channelId);
});

test('a deposit signed by the official client is verified and submitted by the official facilitator', async () => {
  const payer = await fundedPayer();
  const escrowBefore = await sandbox.balanceOf(escrow);
  const settled = await deposit(payer, 1_000_000n, 10_000n);
  assert.equal(settled.amount, '1000000');
  assert.deepEqual(await channel(payer.channelId), { balance: 1_000_000n, totalClaimed: 0n });
  assert.equal(await sandbox.balanceOf(payer.account.address), 9_000_000n);
  assert.equal(await sandbox.balanceOf(escrow), escrowBefore + 1_000_000n);

  // a second deposit on the same channel is a top-up
  await deposit(payer, 250_000n, 20_000n);
  assert.deepEqual(await channel(payer.channelId), { balance: 1_250_000n, totalClaimed: 0n });
});

test('vouchers verify against the deposit; tampered ones are refused', async () => {
  const payer = await fundedPayer();
  await deposit(payer, 500_000n, 1_000n);
  const req = requirements(1_000n);
  const good = await signVoucher(payer.signer, payer.channelId, '2000', caip2);
  const ok = await facilitator.verify(envelope(req, { type: 'voucher', channelConfig: payer.config, voucher: good }), req);
  assert.equal(ok.isValid, true, ok.invalidReason);
  assert.equal((ok.extra as { balance: string }).balance, '500000');

  const over = await signVoucher(payer.signer, payer.channelId, '500001', caip2);
  const tooMuch = await facilitator.verify(envelope(req, { type: 'voucher', channelConfig: payer.config, voucher: over }), req);
  assert.equal(tooMuch.invalidReason, 'invalid_batch_settlement_evm_cumulative_exceeds_balance');

  const forged = { ...good, maxClaimableAmount: '3000' };
  const bad = await facilitator.verify(envelope(req, { type: 'voucher', channelConfig: payer.config, voucher: forged }), req);
  assert.equal(bad.invalidReason, 'invalid_batch_settlement_evm_voucher_signature');
});

test('one claimWithSignature claims several channels; settle sweeps them to the receiver in one transfer', async () => {
  const a = await fundedPayer();
  const b = await fundedPayer();
  await deposit(a, 300_000n, 1_000n);
  await deposit(b, 300_000n, 1_000n);
  const receiverBefore = await sandbox.balanceOf(sandbox.payTo);

  const claimed = await claim([
    { payer: a, cumulative: 12_345n },
    { payer: b, cumulative: 54_321n },
  ]);
  assert.equal(claimed.success, true, claimed.errorReason);
  assert.deepEqual(await channel(a.channelId), { balance: 300_000n, totalClaimed: 12_345n });
  assert.deepEqual(await channel(b.channelId), { balance: 300_000n, totalClaimed: 54_321n });
  assert.equal(await sandbox.balanceOf(sandbox.payTo), receiverBefore, 'a claim moves no tokens');

  // claiming the same voucher again changes nothing
  const replay = await claim([{ payer: a, cumulative: 12_345n }]);
  assert.equal(replay.success, true);
  assert.deepEqual(await channel(a.channelId), { balance: 300_000n, totalClaimed: 12_345n });

  const req = requirements(0n);
  const settled = await facilitator.settle(envelope(req, { type: 'settle', receiver: sandbox.payTo, token: sandbox.asset }), req);
  assert.equal(settled.success, true, settled.errorReason);
  assert.equal(settled.amount, String(12_345n + 54_321n));
  assert.equal(await sandbox.balanceOf(sandbox.payTo), receiverBefore + 12_345n + 54_321n);

  const nothing = await facilitator.settle(envelope(req, { type: 'settle', receiver: sandbox.payTo, token: sandbox.asset }), req);
  assert.equal(nothing.errorReason, 'invalid_batch_settlement_evm_nothing_to_settle');
});

test('a claim signed by anyone but the receiver authorizer is refused on chain', async () => {
  const payer = await fundedPayer();
  await deposit(payer, 100_000n, 1_000n);
  const voucher = await signVoucher(payer.signer, payer.channelId, '5000', caip2);
  const claims = [{ voucher: { channel: payer.config, maxClaimableAmount: '5000' }, signature: voucher.signature, totalClaimed: '5000' }];
  const intruder = privateKeyToAccount(generatePrivateKey());
  const req = requirements(0n);
  const refused = await new BatchSettlementEvmScheme(
    officialEvmSigner({ rpcUrl: sandbox.rpcUrl, chainId: network.chainId, account: privateKeyToAccount(sandbox.settlementPrivateKey) }),
    intruder,
  ).settle(envelope(req, { type: 'claim', claims }), req);
  assert.equal(refused.success, false);
  // and a claim above what the payer signed is refused too
  const overClaim = [{ ...claims[0]!, totalClaimed: '5001' }];
  const over = await facilitator.settle(envelope(req, { type: 'claim', claims: overClaim }), req);
  assert.equal(over.errorReason, 'invalid_batch_settlement_evm_claim_simulation_failed');
  assert.deepEqual(await channel(payer.channelId), { balance: 100_000n, totalClaimed: 0n });
});

test('a cooperative refund claims the last voucher and returns the rest to the payer (partial, then full)', async () => {
  const payer = await fundedPayer();
  await deposit(payer, 200_000n, 1_000n);
  const charged = 7_000n;
  const voucher = await signVoucher(payer.signer, payer.channelId, charged.toString(), caip2);
  const claims = [{ voucher: { channel: payer.config, maxClaimableAmount: charged.toString() }, signature: voucher.signature, totalClaimed: charged.toString() }];
  const req = requirements(1_000n);
  const before = await sandbox.balanceOf(payer.account.address);

  const partial = await facilitator.settle(
    envelope(req, { type: 'refund', channelConfig: payer.config, voucher, amount: '50000', refundNonce: '0', claims }),
    req,
  );
  assert.equal(partial.success, true, partial.errorReason);
  assert.equal(partial.amount, '50000');
  assert.equal(await sandbox.balanceOf(payer.account.address), before + 50_000n);
  assert.deepEqual(await channel(payer.channelId), { balance: 150_000n, totalClaimed: charged });

  const full = await facilitator.settle(
    envelope(req, { type: 'refund', channelConfig: payer.config, voucher, amount: '1000000000', refundNonce: '1', claims: [] }),
    req,
  );
  assert.equal(full.success, true, full.errorReason);
  assert.equal(full.amount, String(150_000n - charged));
  assert.equal(await sandbox.balanceOf(payer.account.address), before + 200_000n - charged);
  assert.equal(await client.readContract({ address: escrow, abi, functionName: 'refundNonce', args: [payer.channelId] }), 2n);

  // a refund signature for a spent nonce is refused
  const stale = await facilitator.settle(
    envelope(req, { type: 'refund', channelConfig: payer.config, voucher, amount: '1', refundNonce: '1', claims: [] }),
    req,
  );
  assert.equal(stale.success, false);
});

test("the payer's timed withdrawal waits out the delay, and vouchers claimed meanwhile stay with the receiver", async () => {
  const payer = await fundedPayer();
  await deposit(payer, 100_000n, 1_000n);
  const gas = createTestClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), mode: 'anvil' });
  await gas.setBalance({ address: payer.account.address, value: parseEther('1') });
  const wallet = createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account: payer.account });
  const send = async (functionName: 'initiateWithdraw' | 'finalizeWithdraw', args: unknown[]) => {
    const hash = await wallet.writeContract({ address: escrow, abi, functionName, args });
    return client.waitForTransactionReceipt({ hash });
  };

  assert.equal((await send('initiateWithdraw', [payer.config, 100_000n])).status, 'success');
  const [, initiatedAt] = (await client.readContract({ address: escrow, abi, functionName: 'pendingWithdrawals', args: [payer.channelId] })) as [bigint, number];
  assert.ok(initiatedAt > 0, 'the escrow records when the withdrawal started');

  // too early: the delay has not run out
  await assert.rejects(wallet.writeContract({ address: escrow, abi, functionName: 'finalizeWithdraw', args: [payer.config] }));

  // the server claims during the delay
  assert.equal((await claim([{ payer, cumulative: 30_000n }])).success, true);

  await gas.increaseTime({ seconds: WITHDRAW_DELAY });
  await gas.mine({ blocks: 1 });
  const before = await sandbox.balanceOf(payer.account.address);
  assert.equal((await send('finalizeWithdraw', [payer.config])).status, 'success');
  assert.equal(await sandbox.balanceOf(payer.account.address), before + 70_000n);
  assert.deepEqual(await channel(payer.channelId), { balance: 30_000n, totalClaimed: 30_000n });
});

test('the committed artifact was built from the current contract source', () => {
  const source = readFileSync(new URL('../../../contracts/BatchSettlement.sol', import.meta.url), 'utf8');
  assert.equal(
    loadBatchSettlementArtifact().sourceSha256,
    createHash('sha256').update(source, 'utf8').digest('hex'),
    'stale artifact: run `npx node scripts/compile-contracts.ts`',
  );
});
