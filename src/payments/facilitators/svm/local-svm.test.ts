// LocalSvmFacilitator against the litesvm sandbox, paid with transactions built by the official x402
// client code (@x402/svm's v1 scheme and the legacy x402 package), exactly as x402-fetch builds them;
// then a tampering matrix of transactions built with @solana/kit, each refused with its own reason
// and none moving any money.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type TransactionSigner,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import { createPaymentHeader } from 'x402/client';
import { decodeHeader } from '../../../x402/encoding.ts';
import { NETWORKS, type SvmNetwork } from '../../../x402/networks.ts';
import type { PaymentPayload, PaymentRequirements } from '../../../x402/types.ts';
import { startSvmSandbox, type SvmSandbox } from '../../../sandbox/svm/svm-sandbox.ts';
import { LocalSvmFacilitator, svmPaymentKey } from './local-svm.ts';
import { onV1Wire, proofOf, requirementOf } from '../../../../test/support/v1-wire-facilitator.ts';

const solana = NETWORKS.solana as SvmNetwork;
const PRICE = 10_000n; // 0.01 USDC
let sandbox: SvmSandbox;
let facilitator: ReturnType<typeof onV1Wire<LocalSvmFacilitator>>;

before(async () => {
  sandbox = await startSvmSandbox(solana);
  facilitator = onV1Wire(new LocalSvmFacilitator({
    network: solana,
    rpcUrl: sandbox.rpcUrl,
    feePayer: sandbox.feePayer.secretKey,
    asset: sandbox.asset,
    maxComputeUnitPrice: 5_000_000n,
    confirmTimeoutMs: 2_000,
    pollingIntervalMs: 20,
  }));
});
after(() => sandbox.stop());

// ---- what a server asks for, and who pays ----

async function requirements(overrides: Partial<PaymentRequirements> = {}): Promise<PaymentRequirements> {
  return {
    scheme: 'exact',
    network: 'solana',
    maxAmountRequired: PRICE.toString(),
    resource: 'http://127.0.0.1/api/v1/ai/chat',
    description: 'chat completion',
    mimeType: 'application/json',
    payTo: sandbox.payTo,
    maxTimeoutSeconds: 60,
    asset: sandbox.asset,
    outputSchema: { input: { type: 'http', method: 'POST', discoverable: true } },
    extra: await facilitator.requirementExtra(),
    ...overrides,
  };
}

async function fundedPayer(): Promise<KeyPairSigner> {
  const payer = await generateKeyPairSigner();
  await sandbox.faucet(payer.address, 1_000_000n);
  return payer;
}

/** Balances of the payer and the payee, to prove what moved (or that nothing did). */
async function balances(payer: Address) {
  return { payer: await sandbox.balanceOf(payer), payTo: await sandbox.balanceOf(sandbox.payTo) };
}

// ---- the official clients ----

test('requirementExtra names our fee payer', async () => {
  assert.deepEqual(await facilitator.requirementExtra(), { feePayer: sandbox.feePayer.address });
});

test('a payment built by @x402/svm (v1 client scheme) verifies and settles once, for exactly the price', async () => {
  const payer = await fundedPayer();
  const required = await requirements();
  const client = new ExactSvmSchemeV1(payer, { rpcUrl: sandbox.rpcUrl });
  const payment = (await client.createPaymentPayload(1, required as never)) as unknown as PaymentPayload;
  assert.equal(payment.network, 'solana');
  assert.match(svmPaymentKey(payment.payload as { transaction: string }) ?? '', /^svm:[0-9a-f]{64}$/);

  const before = await balances(payer.address);
  assert.deepEqual(await facilitator.verify(payment, required), { isValid: true, payer: payer.address });
  const outcome = await facilitator.settle(payment, required);
  assert.equal(outcome.status, 'settled', JSON.stringify(outcome));
  assert.equal(outcome.payer, payer.address);
  const after = await balances(payer.address);
  assert.equal(before.payer - after.payer, PRICE);
  assert.equal(after.payTo - before.payTo, PRICE);

  // The chain agrees, and the same payment cannot be settled again.
  assert.deepEqual(await facilitator.checkSettlement(payment, required, outcome.transaction!), outcome);
  assert.deepEqual(await facilitator.settle(payment, required), { status: 'failed', reason: 'duplicate_settlement', payer: payer.address });
  assert.deepEqual(await balances(payer.address), after);
});

test('a payment built by the legacy x402 package (createPaymentHeader for svm) settles too', async () => {
  const payer = await fundedPayer();
  const required = await requirements();
  const header = await createPaymentHeader(payer as never, 1, required as never, { svmConfig: { rpcUrl: sandbox.rpcUrl } });
  const payment = decodeHeader(header) as PaymentPayload;

  const before = await balances(payer.address);
  assert.deepEqual(await facilitator.verify(payment, required), { isValid: true, payer: payer.address });
  const outcome = await facilitator.settle(payment, required);
  assert.equal(outcome.status, 'settled', JSON.stringify(outcome));
  const after = await balances(payer.address);
  assert.equal(before.payer - after.payer, PRICE);
  assert.equal(after.payTo - before.payTo, PRICE);
});

// ---- tampered transactions, built by hand ----

interface Build {
  payer: TransactionSigner;
  feePayer?: Address | TransactionSigner;
  mint?: Address;
  payTo?: Address;
  amount?: bigint;
  authority?: TransactionSigner;
  computeUnitPrice?: bigint;
  extra?: Instruction[];
  /** leave the payer's signature slot empty */
  unsigned?: boolean;
}

/** The transaction an honest client builds, with one thing changed. */
async function build(b: Build): Promise<PaymentPayload> {
  const mint = b.mint ?? sandbox.asset;
  const authority = b.authority ?? b.payer;
  const [source] = await findAssociatedTokenPda({ mint, owner: authority.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ mint, owner: b.payTo ?? sandbox.payTo, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { value: blockhash } = await createSolanaRpc(sandbox.rpcUrl).getLatestBlockhash().send();
  const feePayer = b.feePayer ?? sandbox.feePayer.address;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => (typeof feePayer === 'string' ? setTransactionMessageFeePayer(feePayer, m) : setTransactionMessageFeePayerSigner(feePayer, m)),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getSetComputeUnitLimitInstruction({ units: 20_000 }),
          getSetComputeUnitPriceInstruction({ microLamports: b.computeUnitPrice ?? 1n }),
          getTransferCheckedInstruction({ source, mint, destination, authority, amount: b.amount ?? PRICE, decimals: 6 }),
          ...(b.extra ?? []),
        ],
        m,
      ),
  );
  let signed = await partiallySignTransactionMessageWithSigners(message);
  if (b.unsigned) signed = { ...signed, signatures: { ...signed.signatures, [authority.address]: null } };
  return { x402Version: 1, scheme: 'exact', network: 'solana', payload: { transaction: getBase64EncodedWireTransaction(signed) } };
}

/** verify and settle both refuse with `reason`, and no balance changes. */
async function assertRefused(payment: PaymentPayload, payer: Address, reason: string, required?: PaymentRequirements) {
  const req = required ?? (await requirements());
  const before = await balances(payer);
  const verified = await facilitator.verify(payment, req);
  assert.equal(verified.isValid, false);
  assert.equal((verified as { invalidReason: string }).invalidReason, reason);
  const settled = await facilitator.settle(payment, req);
  assert.equal(settled.status, 'failed');
  assert.equal((settled as { reason: string }).reason, reason);
  assert.deepEqual(await balances(payer), before, 'no funds moved');
}

test('an honest hand-built transaction passes (the baseline for the matrix)', async () => {
  const payer = await fundedPayer();
  assert.deepEqual(await facilitator.verify(await build({ payer }), await requirements()), { isValid: true, payer: payer.address });
});

test('wrong mint', async () => {
  const payer = await fundedPayer();
  const otherMint = address('Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB');
  await assertRefused(await build({ payer, mint: otherMint }), payer.address, 'invalid_exact_svm_payload_mint_mismatch');
});

test('wrong destination', async () => {
  const payer = await fundedPayer();
  const thief = (await generateKeyPairSigner()).address;
  await assertRefused(await build({ payer, payTo: thief }), payer.address, 'invalid_exact_svm_payload_recipient_mismatch');
});

test('amount too low, and too high', async () => {
  const payer = await fundedPayer();
  await assertRefused(await build({ payer, amount: PRICE - 1n }), payer.address, 'invalid_exact_svm_payload_amount_mismatch');
  await assertRefused(await build({ payer, amount: PRICE + 1n }), payer.address, 'invalid_exact_svm_payload_amount_mismatch');
});

test('a fee payer that is not ours', async () => {
  const payer = await fundedPayer();
  const stranger = await generateKeyPairSigner();
  await assertRefused(await build({ payer, feePayer: stranger.address }), payer.address, 'invalid_exact_svm_fee_payer_mismatch');
});

test('our fee payer as the transfer authority (paying the price itself)', async () => {
  const payer = await fundedPayer();
  const feePayer = sandbox.feePayer.signer;
  await sandbox.faucet(feePayer.address, 1_000_000n);
  const before = await sandbox.balanceOf(feePayer.address);
  const payment = await build({ payer, authority: feePayer, feePayer });
  await assertRefused(payment, feePayer.address, 'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds');
  assert.equal(await sandbox.balanceOf(feePayer.address), before);
});

test('an extra instruction of an unknown program', async () => {
  const payer = await fundedPayer();
  const unknown: Instruction = { programAddress: address('11111111111111111111111111111111'), data: new Uint8Array([2, 0, 0, 0]) };
  await assertRefused(await build({ payer, extra: [unknown] }), payer.address, 'invalid_exact_svm_payload_unknown_fourth_instruction');
});

test('memo instructions after the transfer are accepted', async () => {
  const payer = await fundedPayer();
  const memo: Instruction = { programAddress: address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'), data: new TextEncoder().encode('order 42') };
  const verified = await facilitator.verify(await build({ payer, extra: [memo, memo] }), await requirements());
  assert.deepEqual(verified, { isValid: true, payer: payer.address });
});

test('a compute unit price over the cap (5 lamports per CU)', async () => {
  const payer = await fundedPayer();
  await assertRefused(
    await build({ payer, computeUnitPrice: 5_000_001n }),
    payer.address,
    'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
  );
});

test('a missing payer signature', async () => {
  const payer = await fundedPayer();
  await assertRefused(await build({ payer, unsigned: true }), payer.address, 'invalid_exact_svm_payload_signature_invalid');
});

test('a signature by someone else than the payer', async () => {
  const payer = await fundedPayer();
  const honest = await build({ payer });
  const bytes = Buffer.from((honest.payload as { transaction: string }).transaction, 'base64');
  bytes.fill(7, 1 + 64, 1 + 128); // the payer's signature slot (after the count byte and the fee payer's)
  await assertRefused(
    { ...honest, payload: { transaction: bytes.toString('base64') } },
    payer.address,
    'invalid_exact_svm_payload_signature_invalid',
  );
});

test('an expired blockhash: refused before anything is sent', async () => {
  const payer = await fundedPayer();
  const payment = await build({ payer });
  sandbox.advanceBlocks(151);
  await assertRefused(payment, payer.address, 'blockhash_expired');
});

test('garbage instead of a transaction', async () => {
  const payer = await fundedPayer();
  for (const transaction of ['AAAA', 'bm90IGEgdHJhbnNhY3Rpb24=', '!!!not base64!!!']) {
    await assertRefused({ x402Version: 1, scheme: 'exact', network: 'solana', payload: { transaction } }, payer.address, 'invalid_exact_svm_payload_transaction_could_not_be_decoded');
  }
});

test('wrong network, scheme, version, payload shape', async () => {
  const payer = await fundedPayer();
  const payment = await build({ payer });
  const required = await requirements();
  const reasons = async (p: PaymentPayload, r = required) => ((await facilitator.verify(p, r)) as { invalidReason?: string }).invalidReason;
  assert.equal(await reasons({ ...payment, network: 'solana-devnet' }), 'invalid_network');
  assert.equal(await reasons(payment, { ...required, network: 'solana-devnet' }), 'invalid_network');
  assert.equal(await reasons({ ...payment, scheme: 'upto' }), 'invalid_scheme');
  assert.equal(await reasons({ ...payment, payload: { signature: '0x' } }), 'invalid_payload');
});

test('a replayed transaction: the second settlement of one payment fails, nothing moves twice', async () => {
  const payer = await fundedPayer();
  const payment = await build({ payer });
  const required = await requirements();
  assert.equal((await facilitator.settle(payment, required)).status, 'settled');
  await assertRefused(payment, payer.address, 'duplicate_settlement');
});

test('a transfer the payer cannot afford fails simulation', async () => {
  const payer = await fundedPayer();
  await assertRefused(await build({ payer, amount: 2_000_000n }), payer.address, 'invalid_exact_svm_payload_amount_mismatch');
  const required = await requirements({ maxAmountRequired: '2000000' });
  await assertRefused(await build({ payer, amount: 2_000_000n }), payer.address, 'invalid_exact_svm_transaction_simulation_failed', required);
});

test('sent but not confirmed in time: unknown with the signature, then reconciled as settled', async () => {
  const payer = await fundedPayer();
  const payment = await build({ payer });
  const required = await requirements();
  // A facilitator that waits only briefly, so the test stays fast.
  const impatient = onV1Wire(new LocalSvmFacilitator({
    network: solana,
    rpcUrl: sandbox.rpcUrl,
    feePayer: sandbox.feePayer.signer,
    asset: sandbox.asset,
    confirmTimeoutMs: 100,
    pollingIntervalMs: 20,
  }));
  await sandbox.setAutomine(false);
  try {
    const outcome = await impatient.settle(payment, required);
    assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
    assert.equal(outcome.payer, payer.address);
    assert.equal(outcome.reason, 'settlement_confirmation_timeout');
    assert.deepEqual(await impatient.checkSettlement(payment, required, outcome.transaction!), { ...outcome, reason: 'settlement_pending' });

    await sandbox.mine();
    assert.deepEqual(await facilitator.checkSettlement(payment, required, outcome.transaction!), {
      status: 'settled',
      transaction: outcome.transaction,
      payer: payer.address,
    });
    // Even without the recorded signature, it is recomputed from the payload.
    assert.equal((await facilitator.checkSettlement(payment, required, '')).status, 'settled');
  } finally {
    await sandbox.setAutomine(true);
  }
});

test('readiness: the sandbox payTo is ready; a payTo without a USDC token account is named with the fix', async () => {
  assert.deepEqual(await facilitator.readinessProblems(sandbox.payTo), []);
  const fresh = (await generateKeyPairSigner()).address;
  const problems = await facilitator.readinessProblems(fresh);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, new RegExp(`^solana: payTo ${fresh} has no associated token account for mint ${sandbox.asset}.*spl-token create-account`));
});

// ---- the settle path's RPCs ----

interface RpcCall {
  method: string;
  skipPreflight?: boolean;
}

/** A pass-through in front of the sandbox RPC that records each JSON-RPC method a facilitator calls. */
async function recordingRpc(): Promise<{ url: string; calls: RpcCall[]; close(): Promise<void> }> {
  const target = new URL(sandbox.rpcUrl);
  const calls: RpcCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const message = JSON.parse(body.toString()) as { method: string; params?: [unknown, { skipPreflight?: boolean }?] };
      const options = message.params?.[1];
      calls.push(message.method === 'sendTransaction' ? { method: message.method, skipPreflight: options?.skipPreflight === true } : { method: message.method });
      const forward = request({ host: target.hostname, port: target.port, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(res);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function facilitatorOn(rpcUrl: string): LocalSvmFacilitator {
  return new LocalSvmFacilitator({
    network: solana,
    rpcUrl,
    feePayer: sandbox.feePayer.secretKey,
    asset: sandbox.asset,
    confirmTimeoutMs: 2_000,
    pollingIntervalMs: 20,
  });
}

const lamportsOf = async (owner: Address) => (await createSolanaRpc(sandbox.rpcUrl).getBalance(owner).send()).value;

test('verify then settle of one payment: four RPCs, one simulation of ours and the preflight', async () => {
  const rpc = await recordingRpc();
  try {
    const own = facilitatorOn(rpc.url);
    const payer = await fundedPayer();
    // the same proof and requirement objects, as the gate hands them to verify and then to settle
    const proof = proofOf(await build({ payer }));
    const required = requirementOf(await requirements());
    assert.deepEqual(await own.verify(proof, required), { isValid: true, payer: payer.address });
    assert.deepEqual(rpc.calls.map((c) => c.method).sort(), ['getSignatureStatuses', 'simulateTransaction']);

    rpc.calls.length = 0;
    const outcome = await own.settle(proof, required);
    assert.equal(outcome.status, 'settled', JSON.stringify(outcome));
    // no second verification: the transaction verify signed is sent, and the RPC's preflight checks it again
    assert.deepEqual(rpc.calls, [{ method: 'sendTransaction', skipPreflight: false }, { method: 'getSignatureStatuses' }]);
  } finally {
    await rpc.close();
  }
});

test('settle without a verify by this process simulates once itself and skips the preflight', async () => {
  const rpc = await recordingRpc();
  try {
    const own = facilitatorOn(rpc.url);
    const payer = await fundedPayer();
    const before = await balances(payer.address);
    const outcome = await own.settle(proofOf(await build({ payer })), requirementOf(await requirements()));
    assert.equal(outcome.status, 'settled', JSON.stringify(outcome));
    assert.equal(before.payer - (await balances(payer.address)).payer, PRICE);
    // a full verification (its two reads in parallel, in either order), then the send without a second simulation
    assert.deepEqual(rpc.calls.slice(0, 2).map((c) => c.method).sort(), ['getSignatureStatuses', 'simulateTransaction']);
    assert.deepEqual(rpc.calls.slice(2), [{ method: 'sendTransaction', skipPreflight: true }, { method: 'getSignatureStatuses' }]);
  } finally {
    await rpc.close();
  }
});

test('verified, then the blockhash expires before settlement: failed blockhash_expired, nothing moves, no fee paid', async () => {
  const payer = await fundedPayer();
  const proof = proofOf(await build({ payer }));
  const required = requirementOf(await requirements());
  const own = facilitator.inner;
  assert.equal((await own.verify(proof, required)).isValid, true);
  const before = await balances(payer.address);
  const feePayerLamports = await lamportsOf(sandbox.feePayer.address);

  sandbox.advanceBlocks(151); // the work took longer than the payer's blockhash lives
  assert.deepEqual(await own.settle(proof, required), { status: 'failed', reason: 'blockhash_expired', payer: payer.address });
  assert.deepEqual(await balances(payer.address), before);
  assert.equal(await lamportsOf(sandbox.feePayer.address), feePayerLamports);
});

test('verified, then the payer moves the funds away: the preflight refuses it, nothing moves, no fee paid', async () => {
  const payer = await fundedPayer();
  const proof = proofOf(await build({ payer }));
  const required = requirementOf(await requirements());
  const own = facilitator.inner;
  assert.equal((await own.verify(proof, required)).isValid, true);

  // While the work runs the payer spends the balance elsewhere (a transfer of everything, with its own fee payer).
  const elsewhere = await fundedPayer();
  const drain = await build({ payer, feePayer: payer, payTo: elsewhere.address, amount: 1_000_000n });
  await createSolanaRpc(sandbox.rpcUrl).sendTransaction((drain.payload as { transaction: string }).transaction as never, { encoding: 'base64' }).send();
  assert.equal(await sandbox.balanceOf(payer.address), 0n);
  const payeeBefore = await sandbox.balanceOf(sandbox.payTo);
  const feePayerLamports = await lamportsOf(sandbox.feePayer.address);

  const outcome = await own.settle(proof, required);
  assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
  assert.equal(outcome.reason, 'invalid_exact_svm_transaction_failed');
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payeeBefore);
  assert.equal(await lamportsOf(sandbox.feePayer.address), feePayerLamports);
});
