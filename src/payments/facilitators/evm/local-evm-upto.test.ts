// The local `upto` facilitator against the real Permit2 and our upto proxy on a sandbox anvil, paid by the
// official @x402/evm upto client: real signatures throughout, balances read on-chain.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createTestClient, createWalletClient, http, maxUint256, parseAbi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { NETWORKS, type EvmNetwork } from '../../../x402/networks.ts';
import { PERMIT2_ADDRESS } from '../../../x402/upto.ts';
import { EIP2612_GAS_SPONSORING, ERC20_APPROVAL_GAS_SPONSORING, gasSponsoringDeclarations } from '../../../x402/gas-sponsoring.ts';
import { startEvmSandbox, type EvmSandbox } from '../../../sandbox/evm/evm-sandbox.ts';
import { signUptoPayment, type UptoOffer } from '../../../../test/support/upto-client.ts';
import { LocalEvmUptoFacilitator, type UptoPayment, type UptoRequirement } from './local-evm-upto.ts';

const base = NETWORKS.base as EvmNetwork;
const CEILING = 1_309n; // what 128 output tokens cost at the demo price
let sandbox: EvmSandbox;
let facilitator: LocalEvmUptoFacilitator;
let offer: UptoOffer;
let requirement: UptoRequirement;

before(async () => {
  sandbox = await startEvmSandbox(base);
  facilitator = new LocalEvmUptoFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: sandbox.settlementPrivateKey,
    asset: sandbox.asset,
    receiptTimeoutMs: 10_000,
    pollingIntervalMs: 20,
  });
  offer = {
    caip2: base.caip2,
    asset: sandbox.asset,
    payTo: sandbox.payTo,
    ceiling: CEILING,
    facilitatorAddress: sandbox.settlementAddress,
    eip712: sandbox.eip712,
  };
  requirement = { network: 'base', amount: CEILING, payTo: sandbox.payTo, asset: sandbox.asset };
});
after(() => sandbox.stop());

const tokenAbi = parseAbi(['function approve(address spender, uint256 amount) returns (bool)']);

/** A buyer with test USDC; with native gas and a Permit2 allowance it approved itself, or with neither. */
async function buyer(kind: 'approved' | 'no-gas'): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(account.address, 10_000_000n);
  if (kind === 'approved') {
    const wallet = createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account });
    await wallet.writeContract({ address: sandbox.asset, abi: tokenAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
  } else {
    await createTestClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), mode: 'anvil' }).setBalance({ address: account.address, value: 0n });
  }
  return account;
}

async function pay(account: PrivateKeyAccount, extensions?: Record<string, unknown>): Promise<UptoPayment> {
  const signed = await signUptoPayment(account, sandbox.rpcUrl, offer, extensions);
  return { scheme: 'upto', network: 'base', payload: signed.payload, extensions: signed.extensions };
}

async function balances(account: Address): Promise<[bigint, bigint]> {
  return [await sandbox.balanceOf(account), await sandbox.balanceOf(sandbox.payTo)];
}

test('the official client pays a ceiling and the facilitator settles less: balances move by exactly that, once', async () => {
  const account = await buyer('approved');
  const payment = await pay(account);
  assert.deepEqual(await facilitator.verify(payment, requirement), { isValid: true, payer: account.address });

  const [buyerBefore, payToBefore] = await balances(account.address);
  const outcome = await facilitator.settle(payment, requirement, 431n);
  assert.equal(outcome.status, 'settled');
  assert.match((outcome as { transaction: string }).transaction, /^0x[0-9a-f]{64}$/);
  assert.deepEqual(await balances(account.address), [buyerBefore - 431n, payToBefore + 431n]);

  // the Permit2 nonce is spent: a replay is refused before any transaction, and nothing moves
  assert.deepEqual(await facilitator.verify(payment, requirement), {
    isValid: false,
    invalidReason: 'permit2_invalid_nonce',
    payer: account.address,
  });
  const replay = await facilitator.settle(payment, requirement, 431n);
  assert.equal(replay.status, 'failed');
  assert.deepEqual(await balances(account.address), [buyerBefore - 431n, payToBefore + 431n]);
});

test('a zero cost settles nothing and sends nothing', async () => {
  const account = await buyer('approved');
  const payment = await pay(account);
  const before = await balances(account.address);
  assert.deepEqual(await facilitator.settle(payment, requirement, 0n), { status: 'settled', transaction: '', payer: account.address });
  assert.deepEqual(await balances(account.address), before);
});

test('more than the ceiling is never settled', async () => {
  const account = await buyer('approved');
  const payment = await pay(account);
  const before = await balances(account.address);
  const outcome = await facilitator.settle(payment, requirement, CEILING + 1n);
  assert.deepEqual(outcome, { status: 'failed', reason: 'invalid_upto_evm_payload_settlement_exceeds_amount', payer: account.address });
  assert.deepEqual(await balances(account.address), before);
});

test('without an allowance and without gas sponsoring the payment is refused as permit2_allowance_required', async () => {
  const account = await buyer('no-gas');
  const payment = await pay(account);
  assert.deepEqual(await facilitator.verify(payment, requirement), {
    isValid: false,
    invalidReason: 'permit2_allowance_required',
    payer: account.address,
  });
});

test('a buyer with USDC and no ETH pays through an EIP-2612 permit (eip2612GasSponsoring)', async () => {
  const account = await buyer('no-gas');
  const payment = await pay(account, { [EIP2612_GAS_SPONSORING]: gasSponsoringDeclarations()[EIP2612_GAS_SPONSORING] });
  assert.ok(payment.extensions?.[EIP2612_GAS_SPONSORING], 'the client signed a permit');
  assert.deepEqual(await facilitator.verify(payment, requirement), { isValid: true, payer: account.address });

  const [buyerBefore, payToBefore] = await balances(account.address);
  const outcome = await facilitator.settle(payment, requirement, 1_000n);
  assert.equal(outcome.status, 'settled');
  assert.deepEqual(await balances(account.address), [buyerBefore - 1_000n, payToBefore + 1_000n]);
  const replay = await facilitator.settle(payment, requirement, 1_000n);
  assert.equal(replay.status, 'failed');
  assert.deepEqual(await balances(account.address), [buyerBefore - 1_000n, payToBefore + 1_000n]);
});

test('a buyer with USDC and no ETH pays through a signed approve we fund and broadcast (erc20ApprovalGasSponsoring)', async () => {
  const account = await buyer('no-gas');
  const payment = await pay(account, { [ERC20_APPROVAL_GAS_SPONSORING]: gasSponsoringDeclarations()[ERC20_APPROVAL_GAS_SPONSORING] });
  assert.ok(payment.extensions?.[ERC20_APPROVAL_GAS_SPONSORING], 'the client signed an approve');
  assert.deepEqual(await facilitator.verify(payment, requirement), { isValid: true, payer: account.address });

  const [buyerBefore, payToBefore] = await balances(account.address);
  const outcome = await facilitator.settle(payment, requirement, 777n);
  assert.equal(outcome.status, 'settled');
  assert.deepEqual(await balances(account.address), [buyerBefore - 777n, payToBefore + 777n]);

  // Replays: the approve landed, so the allowance is there and the spent Permit2 nonce refuses it.
  assert.equal((await facilitator.settle(payment, requirement, 777n)).status, 'failed');
  assert.deepEqual(await balances(account.address), [buyerBefore - 777n, payToBefore + 777n]);
});

test('a payment carrying a stale approve settles once the allowance exists, without sending that approve', async () => {
  const account = await buyer('no-gas');
  const declarations = { [ERC20_APPROVAL_GAS_SPONSORING]: gasSponsoringDeclarations()[ERC20_APPROVAL_GAS_SPONSORING] };
  const first = await pay(account, declarations);
  const second = await pay(account, declarations);
  // the two approves share the payer's nonce: once the first is mined, the second can never be
  assert.equal((await facilitator.settle(first, requirement, 100n)).status, 'settled');
  const [buyerBefore] = await balances(account.address);
  assert.equal((await facilitator.settle(second, requirement, 100n)).status, 'settled');
  assert.equal(await sandbox.balanceOf(account.address), buyerBefore - 100n);
});

test('an approve that can no longer be mined (its nonce spent elsewhere) is a refused payment, not an error', async () => {
  const account = await buyer('no-gas');
  const payment = await pay(account, { [ERC20_APPROVAL_GAS_SPONSORING]: gasSponsoringDeclarations()[ERC20_APPROVAL_GAS_SPONSORING] });
  // the payer spends that nonce on something else
  const testClient = createTestClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), mode: 'anvil' });
  await testClient.setBalance({ address: account.address, value: 10n ** 16n });
  const wallet = createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account });
  const spent = await wallet.sendTransaction({ to: account.address, value: 0n });
  // mined before the facilitator looks: under load anvil may answer with the hash before its block is in
  await createPublicClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl) }).waitForTransactionReceipt({ hash: spent, pollingInterval: 50 });
  await testClient.setBalance({ address: account.address, value: 0n });

  const before = await balances(account.address);
  const verdict = await facilitator.verify(payment, requirement);
  assert.deepEqual(verdict, { isValid: false, invalidReason: 'erc20_approval_tx_nonce_mismatch', payer: account.address });
  assert.deepEqual(await facilitator.settle(payment, requirement, 100n), {
    status: 'failed',
    reason: 'erc20_approval_tx_nonce_mismatch',
    payer: account.address,
  });
  assert.deepEqual(await balances(account.address), before);
});

test('a payment naming another facilitator, or another recipient, is refused before anything is sent', async () => {
  const account = await buyer('approved');
  const other = privateKeyToAccount(generatePrivateKey()).address;
  const foreign = await signUptoPayment(account, sandbox.rpcUrl, { ...offer, facilitatorAddress: other });
  const verdict = await facilitator.verify({ scheme: 'upto', network: 'base', payload: foreign.payload }, requirement);
  assert.deepEqual(verdict, { isValid: false, invalidReason: 'upto_facilitator_mismatch', payer: account.address });

  const elsewhere = await signUptoPayment(account, sandbox.rpcUrl, { ...offer, payTo: other });
  const redirected = await facilitator.verify({ scheme: 'upto', network: 'base', payload: elsewhere.payload }, requirement);
  assert.deepEqual(redirected, { isValid: false, invalidReason: 'invalid_permit2_recipient_mismatch', payer: account.address });
});

test('a signature by someone else than the payer is refused', async () => {
  const account = await buyer('approved');
  const payment = await pay(account);
  const impostor = await pay(privateKeyToAccount(generatePrivateKey()));
  const forged = {
    ...payment,
    payload: { ...(payment.payload as object), signature: (impostor.payload as { signature: string }).signature },
  };
  assert.deepEqual(await facilitator.verify(forged, requirement), {
    isValid: false,
    invalidReason: 'invalid_permit2_signature',
    payer: account.address,
  });
});
