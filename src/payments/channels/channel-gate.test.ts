// The channel gate alone (x402 batch-settlement): ChannelGate.handle driven with an in-memory facilitator that
// keeps an escrow's state and records what it was asked, an in-memory SQLite ledger, and vouchers signed for real.
// Every outcome and refusal: deposit, voucher, corrective, replay of a lost answer, refund and its replays,
// withdrawal pending, busy channel, lock lease and heartbeat, facilitator unavailable. The live-chain suites
// (test/channels*.test.ts, test/channel-*.test.ts) hold the end-to-end truth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { voucherTypes } from '@x402/evm';
import { SqliteLedger } from '../../store/sqlite-ledger.ts';
import type { ChannelStore } from '../../store/channel-store.ts';
import { NETWORKS, type EvmNetwork } from '../../x402/networks.ts';
import {
  BATCH_SETTLEMENT_SCHEME,
  channelIdOf,
  CUMULATIVE_EXCEEDS_BALANCE,
  CUMULATIVE_MISMATCH,
  escrowDomain,
  INVALID_VOUCHER_SIGNATURE,
  voucherSignedByAuthorizer,
  type ChannelConfig,
  type ChannelPayload,
  type ChannelSubmission,
  type OnChainChannel,
} from '../../x402/batch-settlement.ts';
import type { PaymentRequirement } from '../../x402/model.ts';
import type { PaidCall, WorkPayment } from '../outcome.ts';
import type { PaymentLabels, PaymentObserver } from '../payment-metrics.ts';
import type { Facilitator } from '../facilitator.ts';
import type { ChannelOffer, PaymentRail } from '../rails.ts';
import type { ChannelFacilitator, ChannelProof, ChannelSettleResult, ChannelVerifyResult } from './channel-facilitator.ts';
import { ChannelGate, type ChannelCall } from './channel-gate.ts';
import { expectKind, paidCall as paidCallOf } from '../../../test/support/payment-core.ts';

const log = pino({ level: 'silent' });
const network = NETWORKS.base as EvmNetwork;
const PRICE = 1_000n;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const authorizer = privateKeyToAccount(generatePrivateKey()).address;
const SALT = `0x${'00'.repeat(32)}` as Hex;

/** An escrow as a facilitator sees it, in memory: it checks what the official facilitator checks and records every call. */
class EscrowFacilitator implements ChannelFacilitator {
  readonly receiverAuthorizer = authorizer;
  readonly sponsorsPermits = false;
  readonly channels = new Map<string, OnChainChannel>();
  readonly verified: ChannelProof[] = [];
  readonly submitted: ChannelSubmission[] = [];
  /** when set, what verify and settle do instead (a facilitator down, a deposit that fails) */
  verifyFault: (() => Promise<ChannelVerifyResult>) | undefined;
  settleFault: (() => Promise<ChannelSettleResult>) | undefined;
  #transactions = 0;

  state(channelId: string): OnChainChannel {
    let state = this.channels.get(channelId);
    if (!state) this.channels.set(channelId, (state = { balance: 0n, totalClaimed: 0n, withdrawRequestedAt: 0, refundNonce: 0n }));
    return state;
  }

  async verify(proof: ChannelProof): Promise<ChannelVerifyResult> {
    this.verified.push(proof);
    if (this.verifyFault) return this.verifyFault();
    const { payload } = proof;
    const payer = payload.channelConfig.payer;
    const ceiling = BigInt(payload.voucher.maxClaimableAmount);
    if (!voucherSignedByAuthorizer(payload.channelConfig, payload.voucher.channelId, ceiling, payload.voucher.signature, network.chainId)) {
      return { isValid: false, invalidReason: INVALID_VOUCHER_SIGNATURE, payer };
    }
    const state = this.state(payload.voucher.channelId);
    const backing = payload.type === 'deposit' ? BigInt(payload.deposit.amount) : 0n;
    if (ceiling > state.balance + backing) return { isValid: false, invalidReason: CUMULATIVE_EXCEEDS_BALANCE, payer };
    return { isValid: true, payer, state: { ...state } };
  }

  async settle(proof: ChannelProof<ChannelSubmission>): Promise<ChannelSettleResult> {
    this.submitted.push(proof.payload);
    if (this.settleFault) return this.settleFault();
    const submission = proof.payload;
    const transaction = `0x${(++this.#transactions).toString(16).padStart(64, '0')}`;
    if (submission.type === 'deposit') {
      const state = this.state(submission.voucher.channelId);
      const amount = BigInt(submission.deposit.amount);
      state.balance += amount;
      return { success: true, transaction, amount, state: { ...state } };
    }
    if (submission.type === 'refund') {
      const state = this.state(submission.voucher.channelId);
      for (const claim of submission.claims) state.totalClaimed = BigInt(claim.totalClaimed);
      const amount = BigInt(submission.amount);
      state.balance -= amount;
      state.refundNonce += 1n;
      return { success: true, transaction, amount, state: { ...state } };
    }
    return { success: true, transaction };
  }

  async readChannel(channelId: string): Promise<OnChainChannel> {
    return { ...this.state(channelId) };
  }

  async unsettled(): Promise<bigint> {
    return 0n;
  }

  async missingContracts(): Promise<string[]> {
    return [];
  }
}

/** What the payment observer was told. */
function recordingObserver() {
  const told: { event: 'verify' | 'settle'; labels: PaymentLabels; outcome: string; amount?: bigint }[] = [];
  const observer: PaymentObserver = {
    async verify(labels, verification) {
      const result = await verification;
      told.push({ event: 'verify', labels, outcome: result.isValid ? 'valid' : result.invalidReason });
      return result;
    },
    async settle(labels, amount, settlement) {
      const result = await settlement;
      told.push({ event: 'settle', labels, outcome: result.status, amount });
      return result;
    },
    reconciled: () => {},
  };
  return { told, observer };
}

/** The rail's exact facilitator: a channel payment never reaches it. */
const NOT_EXACT: Facilitator = {
  requirementExtra: async () => ({}),
  verify: () => Promise.reject(new Error('a channel payment reached the exact facilitator')),
  settle: () => Promise.reject(new Error('a channel payment reached the exact facilitator')),
  checkSettlement: () => Promise.reject(new Error('a channel payment reached the exact facilitator')),
};

interface Setup {
  gate: ChannelGate;
  store: ChannelStore;
  escrow: EscrowFacilitator;
  rail: PaymentRail & { channels: ChannelOffer };
  told: ReturnType<typeof recordingObserver>['told'];
}

function setup(options: { store?: ChannelStore; lockWaitMs?: number; lockLeaseMs?: number; freshStateMs?: number; escrow?: EscrowFacilitator } = {}): Setup {
  const store = options.store ?? new SqliteLedger(':memory:').channels;
  const escrow = options.escrow ?? new EscrowFacilitator();
  const { told, observer } = recordingObserver();
  const channels: ChannelOffer = { facilitator: escrow, withdrawDelay: 900, extra: { receiverAuthorizer: authorizer, withdrawDelay: 900 }, extensions: {}, check: async () => {} };
  const rail = { network, payTo, asset: network.usdc!, facilitator: NOT_EXACT, extra: { ...network.eip712 }, channels };
  const gate = new ChannelGate({
    store,
    log,
    payments: observer,
    ...(options.lockWaitMs !== undefined ? { lockWaitMs: options.lockWaitMs } : {}),
    ...(options.lockLeaseMs !== undefined ? { lockLeaseMs: options.lockLeaseMs } : {}),
    ...(options.freshStateMs !== undefined ? { freshStateMs: options.freshStateMs } : {}),
  });
  return { gate, store, escrow, rail, told };
}

/** A payer's channel to this gateway and the vouchers it signs. */
function payerOf(account: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())) {
  const config: ChannelConfig = { payer: account.address, payerAuthorizer: account.address, receiver: payTo, receiverAuthorizer: authorizer, token: network.usdc as Hex, withdrawDelay: 900, salt: SALT };
  const channelId = channelIdOf(config, network.chainId);
  const voucher = async (ceiling: bigint, signer: PrivateKeyAccount = account) => ({
    channelId,
    maxClaimableAmount: ceiling.toString(),
    signature: await signer.signTypedData({ domain: escrowDomain(network.chainId), types: voucherTypes, primaryType: 'Voucher', message: { channelId, maxClaimableAmount: ceiling } }),
  });
  return {
    config,
    channelId,
    voucher: async (ceiling: bigint): Promise<ChannelPayload> => ({ type: 'voucher', channelConfig: config, voucher: await voucher(ceiling) }),
    forged: async (ceiling: bigint): Promise<ChannelPayload> => ({ type: 'voucher', channelConfig: config, voucher: await voucher(ceiling, privateKeyToAccount(generatePrivateKey())) }),
    deposit: async (amount: bigint, ceiling: bigint): Promise<ChannelPayload> => ({
      type: 'deposit',
      channelConfig: config,
      voucher: await voucher(ceiling),
      deposit: { amount: amount.toString(), authorization: { erc3009Authorization: { validAfter: '0', validBefore: '99999999999', salt: SALT, signature: '0x00' } } },
    }),
    refund: async (signed: bigint, amount?: bigint): Promise<ChannelPayload> => ({
      type: 'refund',
      channelConfig: config,
      voucher: await voucher(signed),
      ...(amount === undefined ? {} : { amount: amount.toString() }),
    }),
  };
}

const paidCall = (overrides: Parameters<typeof paidCallOf>[1] = {}) => paidCallOf(PRICE, overrides);

function channelCall(s: Setup, payload: ChannelPayload, call: PaidCall = paidCall()): ChannelCall {
  const requirement: PaymentRequirement = {
    scheme: BATCH_SETTLEMENT_SCHEME,
    network: network.name,
    amount: call.refundOnly ? 1n : call.amount,
    payTo,
    asset: network.usdc!,
    maxTimeoutSeconds: 60,
    extra: { ...s.rail.extra, ...s.rail.channels.extra },
  };
  return { call, rail: s.rail, requirement, proof: { scheme: BATCH_SETTLEMENT_SCHEME, network: network.name, payload: payload as Record<string, unknown>, wire: 2 }, wires: [2] };
}


/** A channel opened by a deposit of `amount` and its first call; returns the payer and the setup. */
async function opened(s: Setup, amount = 10_000n) {
  const payer = payerOf();
  expectKind(await s.gate.handle(channelCall(s, await payer.deposit(amount, PRICE))), 'delivered');
  return payer;
}

test('a deposit lands before the work; its receipt carries the deposit transaction and amount, the charge in extra', async () => {
  const s = setup();
  const payer = payerOf();
  const runs = { count: 0 };
  const outcome = expectKind(await s.gate.handle(channelCall(s, await payer.deposit(5_000n, PRICE), paidCall({ runs }))), 'delivered');
  assert.equal(runs.count, 1);
  assert.deepEqual(outcome.body, { n: 1 });
  assert.match(outcome.receipt.transaction, /^0x0+1$/);
  assert.equal(outcome.receipt.amount, PRICE, 'the charge');
  assert.equal(outcome.receipt.schemeAmount, '5000', "the scheme's own amount: the deposit");
  assert.equal((outcome.receipt.extra as { chargedAmount: string }).chargedAmount, '1000');
  const record = (await s.store.get(payer.channelId))!;
  assert.deepEqual([record.chargedCumulative, record.deposited, record.balance], [PRICE, 5_000n, 5_000n]);
  assert.deepEqual(s.escrow.submitted.map((x) => x.type), ['deposit']);
  assert.deepEqual(
    s.told.map((t) => [t.event, t.labels.scheme, t.labels.network, t.labels.model, t.outcome]),
    [
      ['verify', 'batch-settlement', 'base', 'test/image', 'valid'],
      ['settle', 'batch-settlement', 'base', 'test/image', 'settled'],
    ],
    'told to the same observer as exact payments: the call span gets its scheme, network, verify and settle',
  );
});

test('a deposit that fails charges nothing; one still unconfirmed is pending; a facilitator that cannot be asked is unavailable', async () => {
  const s = setup();
  const payer = payerOf();
  s.escrow.settleFault = async () => ({ success: false, errorReason: 'invalid_batch_settlement_evm_deposit_transaction_failed', transaction: '', pending: false });
  const failed = expectKind(await s.gate.handle(channelCall(s, await payer.deposit(5_000n, PRICE))), 'payment_required');
  assert.match(failed.reason, /settlement_failed: invalid_batch_settlement_evm_deposit_transaction_failed/);
  s.escrow.settleFault = async () => ({ success: false, errorReason: 'settlement_pending', transaction: '0xabc', pending: true });
  assert.deepEqual(await s.gate.handle(channelCall(s, await payer.deposit(5_000n, PRICE))), { kind: 'pending', transaction: '0xabc' });
  s.escrow.settleFault = () => Promise.reject(new Error('connection refused'));
  assert.equal(expectKind(await s.gate.handle(channelCall(s, await payer.deposit(5_000n, PRICE))), 'refused').code, 'facilitator_unavailable');
  assert.equal((await s.store.get(payer.channelId))?.chargedCumulative ?? 0n, 0n, 'nothing charged');
});

test('a voucher is checked against the fresh mirror without the facilitator, and sends no transaction', async () => {
  const s = setup();
  const payer = await opened(s);
  const asked = s.escrow.verified.length;
  const outcome = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE))), 'delivered');
  assert.equal(s.escrow.verified.length, asked, 'no facilitator round trip');
  assert.deepEqual([outcome.receipt.transaction, outcome.receipt.schemeAmount], ['', '']);
  assert.equal((outcome.receipt.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount, '2000');
  assert.equal(s.escrow.submitted.length, 1, 'only the deposit was ever submitted');
});

test("a call bound to one payer: another payer's voucher is refused, nothing charged or run; the bound payer's works", async () => {
  const s = setup();
  const owner = await opened(s);
  const stranger = await opened(s);
  const runs = { count: 0 };
  const bound = paidCall({ runs, payer: owner.config.payer });
  assert.equal(expectKind(await s.gate.handle(channelCall(s, await stranger.voucher(2n * PRICE), bound)), 'refused').code, 'payer_not_allowed');
  assert.deepEqual([runs.count, (await s.store.get(stranger.channelId))!.chargedCumulative], [0, PRICE]);
  expectKind(await s.gate.handle(channelCall(s, await owner.voucher(2n * PRICE), bound)), 'delivered');
  assert.equal(runs.count, 1);
});

test('a stale mirror sends the voucher to the facilitator; a voucher above the balance is refused', async () => {
  const s = setup({ freshStateMs: 0 });
  const payer = await opened(s, 2_500n);
  const asked = s.escrow.verified.length;
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE))), 'delivered');
  assert.equal(s.escrow.verified.length, asked + 1);
  const over = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(3n * PRICE))), 'payment_required');
  assert.equal(over.reason, CUMULATIVE_EXCEEDS_BALANCE);
});

test('a forged voucher is refused before anything of the channel is told: no state, no voucher, whatever its amount', async () => {
  const s = setup();
  const payer = await opened(s);
  for (const ceiling of [2n * PRICE, 7n]) {
    const refused = expectKind(await s.gate.handle(channelCall(s, await payer.forged(ceiling))), 'payment_required');
    assert.equal(refused.reason, INVALID_VOUCHER_SIGNATURE);
    assert.equal(refused.amend, undefined, 'no channel state for a stranger');
  }
  assert.equal((await s.store.get(payer.channelId))!.chargedCumulative, PRICE);
});

test("the payer's voucher off by a charge gets the corrective 402: the channel's state and the payer's last voucher", async () => {
  const s = setup();
  const payer = await opened(s);
  const stale = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(PRICE + 1n))), 'payment_required');
  assert.equal(stale.reason, CUMULATIVE_MISMATCH);
  const extra = stale.amend!.extra as { channelState: Record<string, unknown>; voucherState: Record<string, unknown> };
  assert.equal(extra.channelState.chargedCumulativeAmount, '1000');
  const record = (await s.store.get(payer.channelId))!;
  assert.deepEqual(extra.voucherState, { signedMaxClaimable: '1000', signature: record.signature });
});

test('the voucher committed last, sent again for the same request (its answer lost): the kept result, charged once', async () => {
  const s = setup();
  const payer = await opened(s);
  const runs = { count: 0 };
  const voucher = await payer.voucher(2n * PRICE);
  const first = expectKind(await s.gate.handle(channelCall(s, voucher, paidCall({ runs }))), 'delivered');
  const again = expectKind(await s.gate.handle(channelCall(s, voucher, paidCall({ runs }))), 'delivered');
  assert.equal(runs.count, 1, 'the work ran once');
  assert.deepEqual(again.body, first.body);
  assert.equal(again.receipt.amount, PRICE);
  assert.equal((await s.store.get(payer.channelId))!.chargedCumulative, 2n * PRICE, 'charged once');
  // the same voucher for another request pays for nothing
  const other = expectKind(await s.gate.handle(channelCall(s, voucher, paidCall({ runs, requestHash: 'request-2' }))), 'payment_required');
  assert.equal(other.reason, CUMULATIVE_MISMATCH);
  assert.equal(runs.count, 1);
});

test('a metered call is charged its cost, never above the quote; failed work charges nothing and the voucher pays later', async () => {
  const s = setup();
  const payer = await opened(s);
  const metered = paidCall({ metered: true, work: async (payment: WorkPayment) => ({ body: { charge: payment.charge ?? null }, media: [], cost: 400n }) });
  const outcome = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE), metered)), 'delivered');
  assert.deepEqual([outcome.receipt.amount, outcome.body], [400n, { charge: null }]);
  const charged = (await s.store.get(payer.channelId))!.chargedCumulative;
  assert.equal(charged, PRICE + 400n);

  const next = await payer.voucher(charged + PRICE);
  const failing = paidCall({ work: () => Promise.reject(new Error('upstream down')) });
  await assert.rejects(s.gate.handle(channelCall(s, next, failing)), /upstream down/);
  assert.equal((await s.store.get(payer.channelId))!.chargedCumulative, charged, 'nothing charged');
  expectKind(await s.gate.handle(channelCall(s, next)), 'delivered');
});

test('a facilitator that cannot be asked: refused, nothing charged', async () => {
  const s = setup({ freshStateMs: 0 });
  const payer = await opened(s);
  s.escrow.verifyFault = () => Promise.reject(new Error('ECONNREFUSED'));
  const refused = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE))), 'refused');
  assert.equal(refused.code, 'facilitator_unavailable');
  assert.equal((await s.store.get(payer.channelId))!.chargedCumulative, PRICE);
});

test('a withdrawal pending: no local verification, and no voucher past what the escrow still pays once it completes', async () => {
  const s = setup();
  const payer = await opened(s, 10_000n);
  // the payer asks the escrow for 8,000 of its 10,000 back; the claimer's round mirrors it
  Object.assign(s.escrow.state(payer.channelId), { withdrawRequestedAt: 1_700_000_000, withdrawAmount: 8_000n });
  await s.store.update(payer.channelId, (current) => current && { ...current, withdrawRequestedAt: 1_700_000_000, syncedAt: Date.now() });
  const asked = s.escrow.verified.length;
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE))), 'delivered');
  assert.equal(s.escrow.verified.length, asked + 1, 'the facilitator read the escrow');
  const refused = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(3n * PRICE))), 'payment_required');
  assert.match(refused.reason, new RegExp(`^${CUMULATIVE_EXCEEDS_BALANCE}: a withdrawal is pending.*2000`));
  // an amount the facilitator does not know: the whole unclaimed balance is leaving
  delete s.escrow.state(payer.channelId).withdrawAmount;
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(3n * PRICE))), 'payment_required');
  assert.equal((await s.store.get(payer.channelId))!.chargedCumulative, 2n * PRICE);
});

test('a channel the ledger lost starts from what the escrow has claimed: the payer is resynchronised', async () => {
  const s = setup();
  const payer = payerOf();
  Object.assign(s.escrow.state(payer.channelId), { balance: 10_000n, totalClaimed: 3_000n });
  const behind = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(6_000n))), 'payment_required');
  assert.equal(behind.reason, CUMULATIVE_MISMATCH);
  assert.equal((behind.amend!.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount, '3000');
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(4_000n))), 'delivered');
});

test('malformed and misdirected payloads are refused: version 1, not a channel payload, another receiver, a refund by POST, a voucher by GET', async () => {
  const s = setup();
  const payer = payerOf();
  const v1 = channelCall(s, await payer.voucher(PRICE));
  assert.match(expectKind(await s.gate.handle({ ...v1, proof: { ...v1.proof, wire: 1 } }), 'payment_required').reason, /^unsupported_scheme/);
  const junk = channelCall(s, await payer.voucher(PRICE));
  assert.match(expectKind(await s.gate.handle({ ...junk, proof: { ...junk.proof, payload: { type: 'claim' } } }), 'payment_required').reason, /invalid_batch_settlement_evm_payload/);
  const elsewhere = { ...(await payer.voucher(PRICE)), channelConfig: { ...payer.config, receiver: authorizer } } as ChannelPayload;
  assert.match(expectKind(await s.gate.handle(channelCall(s, elsewhere)), 'payment_required').reason, /channel_id_mismatch/);
  assert.match(expectKind(await s.gate.handle(channelCall(s, await payer.refund(0n))), 'payment_required').reason, /payload_type: a refund is sent with GET/);
  assert.match(expectKind(await s.gate.handle(channelCall(s, await payer.voucher(PRICE), paidCall({ refundOnly: true }))), 'payment_required').reason, /payload_type: only a refund/);
});

test('a refund claims what was charged and returns the rest; its replay gets the same answer and is never submitted again', async () => {
  const s = setup();
  const payer = await opened(s, 10_000n);
  const refund = await payer.refund(PRICE, 4_000n);
  const call = () => s.gate.handle(channelCall(s, refund, paidCall({ refundOnly: true })));
  const first = expectKind(await call(), 'delivered');
  assert.deepEqual([first.receipt.amount, first.receipt.schemeAmount], [0n, '4000']);
  const submitted = s.escrow.submitted.at(-1) as Extract<ChannelSubmission, { type: 'refund' }>;
  assert.deepEqual([submitted.amount, submitted.refundNonce, submitted.claims.map((c) => c.totalClaimed)], ['4000', '0', ['1000']]);
  for (let i = 0; i < 3; i++) {
    const replay = expectKind(await call(), 'delivered');
    assert.deepEqual([replay.receipt.transaction, replay.receipt.schemeAmount], [first.receipt.transaction, '4000']);
  }
  assert.equal(s.escrow.submitted.filter((x) => x.type === 'refund').length, 1, 'one refund transaction');
  // the same voucher for another amount (or everything) is refused: a voucher asks for one refund
  const more = expectKind(await s.gate.handle(channelCall(s, await payer.refund(PRICE), paidCall({ refundOnly: true }))), 'payment_required');
  assert.match(more.reason, /^invalid_batch_settlement_evm_refund_payload: this voucher was used for a refund already/);
  // after another charge, its voucher asks for the rest
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE))), 'delivered');
  const rest = expectKind(await s.gate.handle(channelCall(s, await payer.refund(2n * PRICE), paidCall({ refundOnly: true }))), 'delivered');
  assert.equal(rest.receipt.schemeAmount, '4000', '10,000 less 4,000 refunded and 2,000 charged');
  const refused = expectKind(await s.gate.handle(channelCall(s, await payer.refund(2n * PRICE, 1n), paidCall({ refundOnly: true }))), 'payment_required');
  assert.match(refused.reason, /refund_payload|refund_no_balance/);
});

test("a refund whose voucher is not what was charged gets the corrective 402 (the payer's own); a stranger's, the signature reason", async () => {
  const s = setup();
  const payer = await opened(s);
  const behind = expectKind(await s.gate.handle(channelCall(s, await payer.refund(0n), paidCall({ refundOnly: true }))), 'payment_required');
  assert.equal(behind.reason, CUMULATIVE_MISMATCH);
  const forged = { ...(await payer.forged(PRICE)), type: 'refund' } as ChannelPayload;
  const stranger = expectKind(await s.gate.handle(channelCall(s, forged, paidCall({ refundOnly: true }))), 'payment_required');
  assert.deepEqual([stranger.reason, stranger.amend], [INVALID_VOUCHER_SIGNATURE, undefined]);
  assert.equal(s.escrow.submitted.filter((x) => x.type === 'refund').length, 0);
});

test('a refund whose transaction is not confirmed stays spent: its replay hears it is pending, nothing is sent again', async () => {
  const s = setup();
  const payer = await opened(s);
  s.escrow.settleFault = async () => ({ success: false, errorReason: 'settlement_pending', transaction: '0xfeed', pending: true });
  const refund = await payer.refund(PRICE);
  assert.deepEqual(await s.gate.handle(channelCall(s, refund, paidCall({ refundOnly: true }))), { kind: 'pending', transaction: '0xfeed' });
  s.escrow.settleFault = undefined;
  assert.deepEqual(await s.gate.handle(channelCall(s, refund, paidCall({ refundOnly: true }))), { kind: 'pending', transaction: '0xfeed' });
  assert.equal(s.escrow.submitted.filter((x) => x.type === 'refund').length, 1);
});

test('a request behind a busy channel waits lockWaitMs, then is refused busy; the channel is served once free', async () => {
  const s = setup({ lockWaitMs: 50 });
  const payer = await opened(s);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const slow = s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE), paidCall({ work: async () => (started(), await held, { body: 'slow', media: [] }) })));
  await running;
  const busy = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(3n * PRICE))), 'refused');
  assert.equal(busy.code, 'payment_in_progress');
  assert.match(busy.message, /channel_busy/);
  release();
  expectKind(await slow, 'delivered');
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(3n * PRICE))), 'delivered');
});

/** The embedded store as instances sharing a database see it: its lock in the database is used. */
function shared(store: ChannelStore, locks: string[] = []): ChannelStore {
  return new Proxy(store, {
    get(target, name) {
      if (name === 'singleInstance') return false;
      if (name === 'lock') return (channel: string, holder: string, leaseMs: number) => (locks.push(holder), target.lock(channel, holder, leaseMs));
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test("instances sharing the ledger: a crashed holder's lock lapses after its lease; a live holder's heartbeat keeps it", async () => {
  const store = shared(new SqliteLedger(':memory:').channels);
  const escrow = new EscrowFacilitator();
  const s = setup({ store, escrow });
  const payer = await opened(s);
  // an instance that took the channel and died: its short lease runs out, and the next request is served
  assert.equal(await store.lock(payer.channelId, 'crashed-instance', 100), true);
  expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE))), 'delivered');

  // a long request holds the channel: its heartbeat renews the lease, so another instance is refused busy meanwhile
  const locks: string[] = [];
  const holder = setup({ store: shared(store, locks), escrow, lockLeaseMs: 200 });
  const other = setup({ store, escrow, lockWaitMs: 50 });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const slow = holder.gate.handle(channelCall(holder, await payer.voucher(3n * PRICE), paidCall({ work: async () => (await held, { body: 'slow', media: [] }) })));
  while (locks.length < 4) await new Promise((resolve) => setTimeout(resolve, 10)); // the lock, then three heartbeats
  assert.equal(expectKind(await other.gate.handle(channelCall(other, await payer.voucher(4n * PRICE))), 'refused').code, 'payment_in_progress');
  release();
  expectKind(await slow, 'delivered');
  expectKind(await other.gate.handle(channelCall(other, await payer.voucher(4n * PRICE))), 'delivered');
});

test('a charge is committed only onto the state it was checked against: a channel moved meanwhile charges nothing', async () => {
  const s = setup();
  const payer = await opened(s);
  // another writer moves the channel while the work runs (as an instance could after losing its lock)
  const racing = paidCall({
    work: async () => {
      await s.store.update(payer.channelId, (current) => current && { ...current, chargedCumulative: current.chargedCumulative + 5n });
      return { body: 'raced', media: [] };
    },
  });
  const refused = expectKind(await s.gate.handle(channelCall(s, await payer.voucher(2n * PRICE), racing)), 'refused');
  assert.equal(refused.code, 'payment_in_progress');
  assert.equal((await s.store.get(payer.channelId))!.chargedCumulative, PRICE + 5n, 'nothing charged by this call');
  assert.equal(s.told.at(-1)!.outcome, 'failed');
});
