// The local `auth-capture` facilitator against Commerce Payments' escrow on a sandbox anvil, paid by the official
// @x402/evm AuthCaptureEvmScheme client for our requirement (our terms in `extra`): real signatures, balances read
// on-chain. What is refused is refused before anything moves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { toClientEvmSigner } from '@x402/evm';
import { AuthCaptureEvmScheme } from '@x402/evm/auth-capture/client';
import { NETWORKS, type EvmNetwork } from '../../../x402/networks.ts';
import type { PaymentProof, PaymentRequirement } from '../../../x402/model.ts';
import { startEvmSandbox, type EvmSandbox } from '../../../sandbox/evm/evm-sandbox.ts';
import { LocalEvmAuthCaptureFacilitator } from './local-evm-auth-capture.ts';

const base = NETWORKS.base as EvmNetwork;
const PRICE = 2_000n;
let sandbox: EvmSandbox;
let facilitator: LocalEvmAuthCaptureFacilitator;
let requirement: PaymentRequirement;

before(async () => {
  sandbox = await startEvmSandbox(base);
  facilitator = new LocalEvmAuthCaptureFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: sandbox.settlementPrivateKey,
    asset: sandbox.asset,
    eip712: sandbox.eip712,
    receiptTimeoutMs: 10_000,
    pollingIntervalMs: 20,
  });
  requirement = {
    scheme: 'auth-capture',
    network: 'base',
    amount: PRICE,
    payTo: sandbox.payTo,
    asset: sandbox.asset,
    maxTimeoutSeconds: 120,
    extra: { ...sandbox.eip712, ...(await facilitator.requirementExtra()) },
    resource: { url: 'http://127.0.0.1/api/v1/ai/images', description: 'an image' },
  };
});
after(() => sandbox.stop());

async function buyer(funds = 10_000_000n): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(account.address, funds);
  return account;
}

/** What the official client signs for `offered` (our requirement as the 402 carries it, possibly altered). */
async function pay(account: PrivateKeyAccount, offered: PaymentRequirement = requirement): Promise<PaymentProof> {
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(sandbox.rpcUrl) }));
  const wire = { ...offered, network: base.caip2, amount: offered.amount.toString() };
  const { payload } = await new AuthCaptureEvmScheme(signer).createPaymentPayload(2, wire as never);
  return { wire: 2, scheme: 'auth-capture', network: 'base', payload } as PaymentProof;
}

test('verify, then settle: one escrow charge moves exactly the price to payTo; the same proof never pays twice', async () => {
  const account = await buyer();
  const proof = await pay(account);
  assert.deepEqual(await facilitator.verify(proof, requirement), { isValid: true, payer: account.address });
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);

  const settled = await facilitator.settle(proof, requirement);
  assert.equal(settled.status, 'settled', JSON.stringify(settled));
  assert.equal(await sandbox.balanceOf(account.address), 10_000_000n - PRICE);
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore + PRICE);
  if (settled.status !== 'settled') return;
  // reconciliation reads the escrow: collected, whichever transaction did it
  assert.equal((await facilitator.checkSettlement(proof, requirement, settled.transaction)).status, 'settled');
  assert.equal((await facilitator.checkSettlement(proof, requirement, '')).status, 'settled');

  const again = await facilitator.settle(proof, requirement);
  assert.equal(again.status, 'failed');
  assert.equal(await sandbox.balanceOf(account.address), 10_000_000n - PRICE, 'charged once');
});

test('a payment that does not match our terms is refused off-chain, naming why', async () => {
  const account = await buyer();
  const stranger = privateKeyToAccount(generatePrivateKey()).address as Address;
  const cases: [string, PaymentRequirement][] = [
    ['invalid_auth_capture_terms', { ...requirement, extra: { ...requirement.extra, captureAuthorizer: stranger } }],
    ['invalid_auth_capture_terms', { ...requirement, payTo: stranger }],
    ['invalid_auth_capture_terms', { ...requirement, extra: { ...requirement.extra, maxFeeBps: 100 } }],
    ['invalid_auth_capture_value', { ...requirement, amount: PRICE - 1n }],
    ['invalid_auth_capture_signature', { ...requirement, extra: { ...requirement.extra, name: 'Not USDC' } }],
  ];
  for (const [reason, offered] of cases) {
    const verdict = await facilitator.verify(await pay(account, offered), requirement);
    assert.deepEqual(verdict, { isValid: false, invalidReason: reason, payer: account.address }, JSON.stringify(offered.extra));
  }
  const signed = await pay(account);
  const forged = { ...signed, payload: { ...(signed.payload as object), signature: `0x${'11'.repeat(65)}` } };
  assert.equal(((await facilitator.verify(forged, requirement)) as { invalidReason: string }).invalidReason, 'invalid_auth_capture_signature');
  assert.equal(await sandbox.balanceOf(account.address), 10_000_000n, 'nothing moved');
});

test('what only the chain knows fails the simulated charge: a payer without the funds', async () => {
  const poor = await buyer(PRICE - 1n);
  const verdict = await facilitator.verify(await pay(poor), requirement);
  assert.equal(verdict.isValid, false);
  assert.equal(await sandbox.balanceOf(poor.address), PRICE - 1n);
});
