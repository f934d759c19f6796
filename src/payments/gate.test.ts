// The payment core alone: PaymentGate.process driven with in-memory facilitators (they answer as each test
// scripts and record what they were asked), an in-memory SQLite ledger, media on disk and EIP-3009 proofs signed
// for real. Every outcome and every refusal, in milliseconds, as the x402 packages test their resource server
// with mock facilitators (coinbase/x402 typescript/packages/core/test/unit/server/x402ResourceServer.test.ts).
// The live-chain suites (test/evm-payments.test.ts, test/replay-guard.test.ts, ...) keep the end-to-end truth.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { SqliteLedger } from '../store/sqlite-ledger.ts';
import { FileMediaStore } from '../media/file-media-store.ts';
import { NETWORKS, type EvmNetwork, type NetworkName } from '../x402/networks.ts';
import type { PaymentProof, PaymentRequirement, Wire } from '../x402/model.ts';
import { transferWithAuthorizationTypes } from './facilitators/evm/eip3009-abi.ts';
import { PERMIT2_ADDRESS, uptoPermit2WitnessTypes } from '@x402/evm';
import type { Facilitator, SettleOutcome, VerifyResult } from './facilitator.ts';
import type { PaymentRail } from './rails.ts';
import { ATTEMPTS_EXHAUSTED, PaymentGate, type GateDeps } from './gate.ts';
import type { ReceivedPayment } from './outcome.ts';
import { expectKind, paidCall as paidCallOf } from '../../test/support/payment-core.ts';

const log = pino({ level: 'silent' });
const PRICE = 10_000n;
const mediaDir = mkdtempSync(join(tmpdir(), 'x402-gate-test-'));
after(() => rmSync(mediaDir, { recursive: true, force: true }));

/** A facilitator that answers what the test scripts (by default: valid, settled) and records what it was asked. */
class ScriptedFacilitator implements Facilitator {
  readonly verified: PaymentProof[] = [];
  readonly settled: { proof: PaymentProof; amount: bigint | undefined }[] = [];
  /** the next answers, first first; an Error is thrown (the facilitator cannot be reached) */
  readonly verdicts: (VerifyResult | Error)[] = [];
  readonly settlements: (SettleOutcome | Error)[] = [];
  #transactions = 0;

  async requirementExtra(): Promise<Record<string, unknown>> {
    return {};
  }

  async verify(proof: PaymentProof): Promise<VerifyResult> {
    this.verified.push(proof);
    const next = this.verdicts.shift() ?? { isValid: true, payer: payerOf(proof) };
    if (next instanceof Error) throw next;
    return next;
  }

  async settle(proof: PaymentProof, _requirement: PaymentRequirement, amount?: bigint): Promise<SettleOutcome> {
    this.settled.push({ proof, amount });
    const next = this.settlements.shift() ?? { status: 'settled', transaction: `0x${(++this.#transactions).toString(16).padStart(64, '0')}`, payer: payerOf(proof) };
    if (next instanceof Error) throw next;
    return next;
  }

  async checkSettlement(): Promise<SettleOutcome> {
    return { status: 'unknown', reason: 'not asked here', payer: '', transaction: '' };
  }
}

const payerOf = (proof: PaymentProof) => String((proof.payload.authorization as { from?: unknown } | undefined)?.from ?? '');

function evmRail(name: NetworkName, facilitator: Facilitator): PaymentRail {
  const network = NETWORKS[name] as EvmNetwork;
  return { network, payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', asset: network.usdc!, facilitator, extra: { ...network.eip712 } };
}

const UPTO_PROXY = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002';
const FACILITATOR_ADDRESS = '0x1111111111111111111111111111111111111111';

function setup(deps: Partial<GateDeps> = {}) {
  const base = new ScriptedFacilitator();
  const polygon = new ScriptedFacilitator();
  const upto = new ScriptedFacilitator();
  const uptoOffer = { facilitator: upto, extra: { facilitatorAddress: FACILITATOR_ADDRESS, assetTransferMethod: 'permit2' }, extensions: {}, check: async () => {} };
  const rails = new Map([
    ['base', { ...evmRail('base', base), upto: uptoOffer }],
    ['polygon', evmRail('polygon', polygon)],
  ] as const);
  const ledger = new SqliteLedger(':memory:');
  const media = new FileMediaStore(mediaDir);
  const gate = new PaymentGate({ rails, ledger, media, log, maxFailedAttempts: { unsettled: 2, settled: 2 }, ...deps });
  return { gate, ledger, media, base, polygon, upto, rails };
}

const paidCall = (overrides: Parameters<typeof paidCallOf>[1] = {}) => paidCallOf(PRICE, overrides);

/** An EIP-3009 authorization for `value` to `to`, signed by `buyer`, as a wire edge hands it to the gate. */
async function payment(
  buyer: PrivateKeyAccount,
  options: { network?: NetworkName; value?: bigint; to?: string; nonce?: Hex; validSeconds?: number; wire?: Wire; accepted?: ReceivedPayment['accepted']; paymentId?: string } = {},
): Promise<ReceivedPayment> {
  const network = NETWORKS[options.network ?? 'base'] as EvmNetwork;
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: buyer.address,
    to: (options.to ?? '0x209693Bc6afc0C5328bA36FaF03C514EF312287C') as Hex,
    value: options.value ?? PRICE,
    validAfter: BigInt(now - 600),
    validBefore: BigInt(now + (options.validSeconds ?? 3_600)),
    nonce: options.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await buyer.signTypedData({
    domain: { ...network.eip712, chainId: network.chainId, verifyingContract: network.usdc as Hex },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const payload = { signature, authorization: Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, String(v)])) };
  const wire = options.wire ?? 1;
  return {
    proof: { scheme: 'exact', network: network.name, payload, wire },
    wires: [wire],
    source: wire === 2 ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT',
    ...(options.accepted ? { accepted: options.accepted } : {}),
    ...(options.paymentId ? { paymentId: options.paymentId } : {}),
  };
}


/** An upto Permit2 authorization for at most `ceiling`, signed by `buyer`, as a v2 edge hands it to the gate. */
async function uptoPayment(buyer: PrivateKeyAccount, ceiling: bigint, validSeconds = 3_600): Promise<ReceivedPayment> {
  const network = NETWORKS.base as EvmNetwork;
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: buyer.address,
    permitted: { token: network.usdc as Hex, amount: ceiling },
    spender: UPTO_PROXY as Hex,
    nonce: BigInt(`0x${randomBytes(16).toString('hex')}`),
    deadline: BigInt(now + validSeconds),
    witness: { to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' as Hex, facilitator: FACILITATOR_ADDRESS as Hex, validAfter: BigInt(now - 600) },
  };
  const signature = await buyer.signTypedData({
    domain: { name: 'Permit2', chainId: network.chainId, verifyingContract: PERMIT2_ADDRESS as Hex },
    types: uptoPermit2WitnessTypes,
    primaryType: 'PermitWitnessTransferFrom',
    message: { permitted: authorization.permitted, spender: authorization.spender, nonce: authorization.nonce, deadline: authorization.deadline, witness: authorization.witness },
  });
  const strings = JSON.parse(JSON.stringify(authorization, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as Record<string, unknown>;
  return { proof: { scheme: 'upto', network: 'base', payload: { signature, permit2Authorization: strings }, wire: 2 }, wires: [2], source: 'PAYMENT-SIGNATURE' };
}

const buyer = () => privateKeyToAccount(generatePrivateKey());

test('no payment: payment required, on the named network or on every rail (EVM first) with why', async () => {
  const { gate } = setup();
  const named = expectKind(await gate.process(paidCall({ network: 'base' })), 'payment_required');
  assert.deepEqual([named.reason, named.rails.map((r) => r.network.name)], ['X-PAYMENT header is required', ['base']]);
  const any = expectKind(await gate.process(paidCall()), 'payment_required');
  assert.match(any.reason, /X-Network header is required \(supported: base, polygon\)/);
  assert.deepEqual(any.rails.map((r) => r.network.name), ['base', 'polygon']);
  const unreadable = expectKind(await gate.process(paidCall({ payment: 'invalid_payment: X-PAYMENT is not base64-encoded JSON' })), 'payment_required');
  assert.match(unreadable.reason, /^invalid_payment/);
});

test('the offers: each rail once, exact, with the call as its resource', async () => {
  const { gate, rails } = setup();
  const { requirements, extensions } = gate.offers(paidCall(), [...rails.values()]);
  assert.deepEqual(
    requirements.map((r) => [r.scheme, r.network, r.amount, r.resource?.url]),
    [
      ['exact', 'base', PRICE, 'http://gateway.test/api/v1/ai/images'],
      ['exact', 'polygon', PRICE, 'http://gateway.test/api/v1/ai/images'],
    ],
  );
  assert.deepEqual(extensions, {});
});

test('networks: the proof names it; a different one asked for is a mismatch; an unknown one is unsupported', async () => {
  const { gate, base } = setup();
  const onPolygon = await payment(buyer(), { network: 'polygon' });
  const mismatch = expectKind(await gate.process(paidCall({ network: 'base', payment: onPolygon })), 'refused');
  assert.deepEqual([mismatch.code, mismatch.subject], ['network_mismatch', 'network']);
  const asked = expectKind(await gate.process(paidCall({ network: 'atlantis', payment: onPolygon })), 'refused');
  assert.deepEqual([asked.code, asked.subject], ['unsupported_network', 'network']);
  const elsewhere = await payment(buyer());
  const unknownProof = expectKind(await gate.process(paidCall({ payment: { ...elsewhere, proof: { ...elsewhere.proof, network: 'solana' } } })), 'refused');
  assert.deepEqual([unknownProof.code, unknownProof.subject], ['unsupported_network', 'payment']);
  assert.equal(base.verified.length, 0, 'nothing reached a facilitator');
});

test('a network whose readiness check failed is not offered; none left is refused, nothing charged', async () => {
  const { gate } = setup({ offered: (network) => network === 'polygon' });
  assert.deepEqual(expectKind(await gate.process(paidCall()), 'payment_required').rails.map((r) => r.network.name), ['polygon']);
  assert.equal(expectKind(await gate.process(paidCall({ network: 'base' })), 'refused').code, 'facilitator_unavailable');
});

test('what the proof says it accepted must be this call\'s requirement; an unknown scheme or a wrong recipient is refused', async () => {
  const { gate, base } = setup();
  const wrongAmount = await payment(buyer(), { wire: 2, accepted: { scheme: 'exact', amount: PRICE - 1n, asset: NETWORKS.base.usdc!, payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' } });
  assert.match(expectKind(await gate.process(paidCall({ payment: wrongAmount })), 'payment_required').reason, /^invalid_amount/);
  const unknownScheme = await payment(buyer());
  const refused = expectKind(await gate.process(paidCall({ payment: { ...unknownScheme, proof: { ...unknownScheme.proof, scheme: 'streaming' } } })), 'payment_required');
  assert.match(refused.reason, /^unsupported_scheme: streaming \(accepted on base: "exact"/);
  const elsewhere = await payment(buyer(), { to: '0x000000000000000000000000000000000000dEaD' });
  assert.match(expectKind(await gate.process(paidCall({ payment: elsewhere })), 'payment_required').reason, /recipient/);
  const underpaid = await payment(buyer(), { value: PRICE - 1n });
  assert.match(expectKind(await gate.process(paidCall({ payment: underpaid })), 'payment_required').reason, /value/);
  assert.equal(base.verified.length, 0);
});

test('verified, worked, settled: delivered with the receipt; the ledger keeps the result', async () => {
  const { gate, ledger, base } = setup();
  const runs = { count: 0 };
  const paid = await payment(buyer());
  const outcome = expectKind(await gate.process(paidCall({ payment: paid, runs })), 'delivered');
  assert.deepEqual(outcome.body, { n: 1 });
  assert.equal(outcome.receipt.amount, PRICE);
  assert.match(outcome.receipt.transaction, /^0x0+1$/);
  assert.deepEqual([base.verified.length, base.settled.length, base.settled[0]!.amount], [1, 1, PRICE]);
  const [row] = (await ledger.listPayments({}, 5)).payments;
  assert.deepEqual([row!.state, row!.resultAvailable], ['settled', true]);
});

test('a verification that says no: payment required with its reason, the proof free to come again', async () => {
  const { gate, base } = setup();
  const paid = await payment(buyer());
  base.verdicts.push({ isValid: false, invalidReason: 'insufficient_funds' });
  assert.equal(expectKind(await gate.process(paidCall({ payment: paid })), 'payment_required').reason, 'insufficient_funds');
  expectKind(await gate.process(paidCall({ payment: paid })), 'delivered');
});

test('a facilitator that cannot be asked: refused unavailable, nothing charged, the proof free to come again', async () => {
  const { gate, base } = setup();
  const paid = await payment(buyer());
  base.verdicts.push(new Error('ECONNREFUSED'));
  assert.equal(expectKind(await gate.process(paidCall({ payment: paid })), 'refused').code, 'facilitator_unavailable');
  assert.equal(base.settled.length, 0);
  expectKind(await gate.process(paidCall({ payment: paid })), 'delivered');
});

test('a settlement that fails: payment required with a failed receipt, the result withheld and its media deleted', async () => {
  const { gate, base, media } = setup();
  const stored = await media.put(new Uint8Array([1, 2, 3]), 'image/png');
  base.settlements.push({ status: 'failed', reason: 'insufficient_funds', payer: '0xabc' });
  const outcome = expectKind(await gate.process(paidCall({ payment: await payment(buyer()), work: async () => ({ body: { id: stored.id }, media: [stored.id] }) })), 'payment_required');
  assert.equal(outcome.reason, 'settlement_failed: insufficient_funds');
  assert.equal(outcome.failed?.receipt.success, false);
  assert.equal(await media.info(stored.id), undefined, 'media of an unpaid result is deleted');
});

test('a settlement of unknown outcome: pending (never "pay again"); the same proof hears pending', async () => {
  const { gate, base, ledger } = setup();
  const paid = await payment(buyer());
  base.settlements.push({ status: 'unknown', reason: 'receipt timeout', payer: '0xabc', transaction: '0xbeef' });
  assert.deepEqual(await gate.process(paidCall({ payment: paid })), { kind: 'pending', transaction: '0xbeef' });
  assert.equal((await ledger.listPayments({}, 5)).payments[0]!.state, 'pending');
  assert.deepEqual(await gate.process(paidCall({ payment: paid })), { kind: 'pending', transaction: '0xbeef' });
});

test('a settled proof again: the genuine one for the same request gets the kept result; for another request, or forged, nothing', async () => {
  const { gate, base } = setup();
  const account = buyer();
  const runs = { count: 0 };
  const paid = await payment(account);
  const first = expectKind(await gate.process(paidCall({ payment: paid, runs })), 'delivered');
  const again = expectKind(await gate.process(paidCall({ payment: paid, runs })), 'delivered');
  assert.deepEqual([again.body, again.receipt.transaction, runs.count, base.settled.length], [first.body, first.receipt.transaction, 1, 1]);

  // the genuine proof with another body: answered as an unknown proof is (the chain says its nonce is spent)
  base.verdicts.push({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
  assert.equal(expectKind(await gate.process(paidCall({ payment: paid, runs, requestHash: 'request-2' })), 'payment_required').reason, 'invalid_exact_evm_nonce_already_used');
  // a forgery carrying its public key (payer + nonce) under another signature: its facilitator's verdict, no result
  const nonce = (paid.proof.payload.authorization as { nonce: Hex }).nonce;
  const forged = await payment(account, { nonce, validSeconds: 7_200 });
  base.verdicts.push({ isValid: false, invalidReason: 'invalid_exact_evm_payload_signature' });
  assert.equal(expectKind(await gate.process(paidCall({ payment: forged, runs })), 'payment_required').reason, 'invalid_exact_evm_payload_signature');
  assert.deepEqual([runs.count, base.settled.length], [1, 1]);
});

test('a proof presented again while its work runs: in progress', async () => {
  const { gate } = setup();
  const paid = await payment(buyer());
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const first = gate.process(paidCall({ payment: paid, work: async () => (started(), await held, { body: 'done', media: [] }) }));
  await running;
  assert.equal(expectKind(await gate.process(paidCall({ payment: paid })), 'refused').code, 'payment_in_progress');
  release();
  expectKind(await first, 'delivered');
});

test('work that fails charges nothing; past maxFailedAttempts the proof is no longer accepted', async () => {
  const { gate, base } = setup();
  const paid = await payment(buyer());
  const failing = paidCall({ payment: paid, work: () => Promise.reject(new Error('upstream down')) });
  await assert.rejects(gate.process(failing), /upstream down/);
  await assert.rejects(gate.process(failing), /upstream down/);
  const exhausted = expectKind(await gate.process(paidCall({ payment: paid })), 'payment_required');
  assert.match(exhausted.reason, new RegExp(`^${ATTEMPTS_EXHAUSTED}: the paid work failed 2 times`));
  assert.equal(base.settled.length, 0, 'nothing settled');
});

test('settle first: the money moves before the work; a failed work reruns free for the same proof, until its attempts run out', async () => {
  const { gate, base } = setup();
  const paid = await payment(buyer());
  const runs = { count: 0 };
  const failing = paidCall({ payment: paid, settleFirst: () => true, work: () => Promise.reject(new Error('upstream down')) });
  await assert.rejects(gate.process(failing), /your payment is settled: retry with the same X-PAYMENT/);
  assert.equal(base.settled.length, 1, 'settled before the work');
  const retried = expectKind(await gate.process(paidCall({ payment: paid, runs, settleFirst: () => true })), 'delivered');
  assert.deepEqual([retried.body, base.settled.length], [{ n: 1 }, 1]);

  const other = await payment(buyer());
  const broken = paidCall({ payment: other, settleFirst: () => true, work: () => Promise.reject(new Error('upstream down')) });
  await assert.rejects(gate.process(broken), /retry with the same/);
  await assert.rejects(gate.process(broken), /recorded for a refund/);
  const refused = expectKind(await gate.process(paidCall({ payment: other, settleFirst: () => true })), 'refused');
  assert.equal(refused.code, 'payment_attempts_exhausted');
  assert.match(refused.transaction ?? '', /^0x/);
});

test('a stream that could outlive its proof settles first', async () => {
  const { gate, base } = setup();
  const order: string[] = [];
  const facilitatorSettle = base.settle.bind(base);
  base.settle = async (...args) => (order.push('settle'), facilitatorSettle(...args));
  const short = await payment(buyer(), { validSeconds: 30 });
  expectKind(await gate.process(paidCall({ payment: short, streamSeconds: 120, work: async () => (order.push('work'), { body: 'streamed', media: [] }) })), 'delivered');
  assert.deepEqual(order, ['settle', 'work']);
});

test('a payment identifier is bound to the first payment that verified with it; another payment under it is refused', async () => {
  const { gate } = setup();
  const id = 'order-0001-abcdefgh';
  expectKind(await gate.process(paidCall({ payment: await payment(buyer(), { paymentId: id }) })), 'delivered');
  const conflict = expectKind(await gate.process(paidCall({ payment: await payment(buyer(), { paymentId: id }) })), 'refused');
  assert.deepEqual([conflict.code, conflict.subject], ['payment_id_conflict', 'payment']);
});

test('a call bound to one payer: anyone else\'s payment is refused once verified, nothing charged or run; its payer\'s is told who pays, then works', async () => {
  const { gate, base, ledger } = setup();
  const owner = buyer();
  const runs = { count: 0 };
  const told: string[] = [];
  const bound = (paid: ReceivedPayment) => paidCall({ payment: paid, runs, payer: owner.address.toLowerCase(), paidBy: (payer) => told.push(payer) });
  const stranger = await payment(buyer());
  const refused = expectKind(await gate.process(bound(stranger)), 'refused');
  assert.deepEqual([refused.code, refused.subject], ['payer_not_allowed', 'payment']);
  assert.deepEqual([runs.count, base.settled.length, told.length], [0, 0, 0]);
  assert.equal((await ledger.listPayments({}, 5)).payments[0]!.state, 'released');
  // the owner's address in another letter case is the same payer
  expectKind(await gate.process(bound(await payment(owner))), 'delivered');
  assert.deepEqual([runs.count, base.settled.length, told], [1, 1, [owner.address]]);
});

test('a GET to a paid URL takes a channel refund only: an exact payment there is refused', async () => {
  const { gate, base } = setup();
  const refused = expectKind(await gate.process(paidCall({ refundOnly: true, payment: await payment(buyer()) })), 'payment_required');
  assert.match(refused.reason, /only a batch-settlement refund is taken here/);
  assert.equal(base.verified.length, 0);
});

test('every verification and settlement is told to the observer, labelled by network, scheme and model', async () => {
  const told: string[] = [];
  const { gate } = setup({
    observe: {
      verify: async (labels, verification) => (told.push(`verify ${labels.network} ${labels.scheme} ${labels.model}`), verification),
      settle: async (labels, amount, settlement) => (told.push(`settle ${labels.network} ${labels.scheme} ${amount}`), settlement),
      reconciled: () => {},
    },
  });
  expectKind(await gate.process(paidCall({ payment: await payment(buyer(), { network: 'polygon' }) })), 'delivered');
  assert.deepEqual(told, ['verify polygon exact test/image', `settle polygon exact ${PRICE}`]);
});

test('upto: offered beside exact for an operation that takes it (metered chat); it settles the cost of the result', async () => {
  const { gate, upto, rails } = setup();
  const metered = paidCall({ metered: true, schemes: ['exact', 'upto'], work: async () => ({ body: 'metered', media: [], cost: 431n }) });
  assert.deepEqual(gate.offers(metered, [rails.get('base')!]).requirements.map((r) => r.scheme), ['exact', 'upto']);
  assert.deepEqual(gate.offers(paidCall(), [rails.get('base')!]).requirements.map((r) => r.scheme), ['exact']);
  const outcome = expectKind(await gate.process({ ...metered, payment: await uptoPayment(buyer(), PRICE) }), 'delivered');
  assert.equal(outcome.receipt.amount, 431n);
  assert.deepEqual(upto.settled.map((s) => s.amount), [431n]);
  const notMetered = expectKind(await gate.process(paidCall({ payment: await uptoPayment(buyer(), PRICE) })), 'payment_required');
  assert.match(notMetered.reason, /^unsupported_scheme: upto/);
});

test('upto on a stream: the stream stops in time for its proof to settle; a proof too short for any answer is refused', async () => {
  const { gate, upto } = setup();
  const deadlines: (number | undefined)[] = [];
  const streamed = (payment: ReceivedPayment) =>
    paidCall({ metered: true, schemes: ['exact', 'upto'], streamSeconds: 600, payment, work: async (granted) => (deadlines.push(granted.deadline), { body: 'streamed', media: [], cost: 1n }) });
  expectKind(await gate.process(streamed(await uptoPayment(buyer(), PRICE, 120))), 'delivered');
  assert.ok(deadlines[0]! > Date.now() && deadlines[0]! <= Date.now() + 120_000, 'a deadline before the proof expires');
  const tooShort = expectKind(await gate.process(streamed(await uptoPayment(buyer(), PRICE, 10))), 'payment_required');
  assert.match(tooShort.reason, /^payment_expires_too_soon/);
  assert.equal(upto.settled.length, 1);
});
