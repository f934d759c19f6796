// One behavioural suite for every Ledger engine: the embedded SQLite one and PostgreSQL (a throwaway server
// started by test/support/postgres.ts; the suite fails, it does not skip, when PostgreSQL is not installed).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Ledger, NewPayment, PaymentSummary, ReservationHolder } from './ledger.ts';
import { SqliteLedger } from './sqlite-ledger.ts';
import { newChannelRecord } from './channel-store.ts';
import { PostgresLedger } from './postgres-ledger.ts';
import { openLedger } from './open-ledger.ts';
import { loadConfig } from '../config/load.ts';
import { startPostgres, type PostgresServer } from '../../test/support/postgres.ts';

let serial = 0;
function payment(overrides: Partial<NewPayment> = {}): NewPayment {
  serial++;
  return {
    key: `base:0xasset:0xpayer:0xnonce${serial}`,
    network: 'base',
    payer: '0x00000000000000000000000000000000000000aa',
    amount: '10000',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: '0x00000000000000000000000000000000000000bb',
    resource: 'http://127.0.0.1/api/v1/ai/chat',
    model: 'local/demo-bigram',
    requestHash: `hash-${serial}`,
    payload: { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x01', n: serial } },
    requirements: { scheme: 'exact', maxAmountRequired: '10000' },
    ...overrides,
  };
}

/** Moves a fresh reservation to 'pending' the way the gate does. */
async function pendingPayment(ledger: Ledger, tx: string | null = null): Promise<NewPayment> {
  const p = payment();
  assert.deepEqual(await ledger.reserve(p), { reserved: true });
  assert.ok(await ledger.transition(p.key, ['reserved'], { state: 'verified', payer: p.payer }));
  assert.ok(await ledger.transition(p.key, ['verified'], { state: 'pending', txHash: tx, result: { status: 200, body: { ok: 1 }, media: [] } }));
  return p;
}

/** A ledger under test, and a back door to age a payment's row (created_at and updated_at) or a payment id's, which the API never sets. */
interface Opened {
  ledger: Ledger;
  backdate(key: string, at: Date): Promise<void>;
}

const DAY = 24 * 60 * 60 * 1000;

/** Every page of a listing, following `next` until it is null. */
async function allPages(ledger: Ledger, filter: Parameters<Ledger['listPayments']>[0], limit: number): Promise<PaymentSummary[][]> {
  const pages: PaymentSummary[][] = [];
  let after: Parameters<Ledger['listPayments']>[2];
  do {
    const page = await ledger.listPayments(filter, limit, after);
    pages.push(page.payments);
    after = page.next ?? undefined;
    assert.ok(pages.length < 100, 'paging terminates');
  } while (after);
  return pages;
}

function ledgerSuite(name: string, open: () => Promise<Opened>): void {
  describe(name, () => {
    let ledger: Ledger;
    let backdate: Opened['backdate'];
    beforeEach(async () => {
      await ledger?.close();
      ({ ledger, backdate } = await open());
    });
    after(async () => {
      await ledger?.close();
    });

    test('reserve: a new key is reserved and reads back as stored', async () => {
      const p = payment();
      assert.deepEqual(await ledger.reserve(p), { reserved: true });
      const stored = await ledger.get(p.key);
      assert.ok(stored);
      assert.equal(stored.state, 'reserved');
      assert.equal(stored.amount, '10000');
      assert.equal(stored.payTo, p.payTo);
      assert.equal(stored.model, 'local/demo-bigram');
      assert.deepEqual(stored.payload, p.payload);
      assert.deepEqual(stored.requirements, p.requirements);
      assert.equal(stored.txHash, null);
      assert.equal(stored.result, null);
      assert.equal(stored.leaseUntil, null);
      assert.ok(!Number.isNaN(Date.parse(stored.createdAt)));
      assert.equal(await ledger.get('no-such-key'), undefined);
    });

    test('reserve again: the existing payment comes back, untouched', async () => {
      const p = payment();
      await ledger.reserve(p);
      const again = await ledger.reserve({ ...p, requestHash: 'another-request' });
      assert.equal(again.reserved, false);
      assert.equal(!again.reserved && again.existing.state, 'reserved');
      assert.equal(!again.reserved && again.existing.requestHash, p.requestHash);
      for (const state of ['verified', 'pending', 'settled'] as const) {
        const q = payment();
        await ledger.reserve(q);
        await ledger.transition(q.key, ['reserved'], { state });
        const outcome = await ledger.reserve(q);
        assert.equal(outcome.reserved, false, `a ${state} payment cannot be reserved again`);
      }
    });

    test('re-reserve after released or failed: the proof moved no funds, so it may be used again', async () => {
      for (const state of ['released', 'failed'] as const) {
        const p = payment();
        await ledger.reserve(p);
        await ledger.transition(p.key, ['reserved'], { state, error: 'boom', txHash: '0xabc' });
        assert.deepEqual(await ledger.reserve({ ...p, requestHash: 'second-request', model: 'preview-image' }), { reserved: true });
        const stored = await ledger.get(p.key);
        assert.equal(stored?.state, 'reserved');
        assert.equal(stored?.requestHash, 'second-request');
        assert.equal(stored?.model, 'preview-image', 'the new request names the model');
        assert.equal(stored?.error, null);
        assert.equal(stored?.txHash, null);
      }
    });

    test('failed attempts: counted per key; past the bound a released key is not reserved again, whichever request', async () => {
      const p = payment();
      assert.equal(await ledger.reserve(p, 2).then(() => ledger.get(p.key)).then((r) => r?.failedAttempts), 0);
      const failOnce = async () => {
        await ledger.transition(p.key, ['reserved'], { state: 'verified' });
        assert.ok(await ledger.transition(p.key, ['verified'], { state: 'released', error: 'upstream 500', countFailure: true }));
      };
      await failOnce();
      assert.equal((await ledger.get(p.key))?.failedAttempts, 1);
      assert.deepEqual(await ledger.reserve(p, 2), { reserved: true }, 'one failure of two allowed: reserved again');
      assert.equal((await ledger.get(p.key))?.failedAttempts, 1, 'a new reservation keeps the count');
      await failOnce();
      const refused = await ledger.reserve({ ...p, requestHash: 'another-request' }, 2);
      assert.equal(refused.reserved, false);
      assert.equal(!refused.reserved && refused.existing.state, 'released');
      assert.equal(!refused.reserved && refused.existing.failedAttempts, 2);
      assert.deepEqual(await ledger.reserve(p, 3), { reserved: true }, 'a higher bound lets it run again');
      // a verification failure is not a failed attempt of the work
      await ledger.transition(p.key, ['reserved'], { state: 'released', error: 'invalid_signature' });
      assert.equal((await ledger.get(p.key))?.failedAttempts, 2);
      // settled first: failures are counted on the settled row, which stays settled
      const q = payment();
      await ledger.reserve(q);
      await ledger.transition(q.key, ['reserved'], { state: 'settled', txHash: '0xfeed' });
      assert.ok(await ledger.transition(q.key, ['settled'], { state: 'settled', countFailure: true, error: 'payment_attempts_exhausted' }));
      const settled = await ledger.get(q.key);
      assert.deepEqual([settled?.state, settled?.failedAttempts, settled?.error, settled?.txHash], ['settled', 1, 'payment_attempts_exhausted', '0xfeed']);
      assert.equal((await ledger.listPayments({ state: 'settled' }, 10)).payments.find((row) => row.key === q.key)?.failedAttempts, 1);
    });

    test('transition: guarded by `from`, with its fields written', async () => {
      const p = payment();
      await ledger.reserve(p);
      assert.equal(await ledger.transition(p.key, ['verified'], { state: 'pending' }), false, 'not in the from state');
      assert.equal(await ledger.transition('no-such-key', ['reserved'], { state: 'verified' }), false);
      assert.equal(await ledger.transition(p.key, ['reserved', 'verified'], { state: 'verified', payer: '0xPAYER' }), true);
      const result = { status: 200, body: { z: 1, a: [1, 2], m: 'ü' }, media: ['m1'] };
      assert.equal(await ledger.transition(p.key, ['verified'], { state: 'pending', result }), true);
      assert.equal(await ledger.transition(p.key, ['pending'], { state: 'settled', txHash: '0xfeed' }), true);
      assert.equal(await ledger.transition(p.key, ['pending'], { state: 'failed' }), false, 'a settled payment stays settled');
      const stored = await ledger.get(p.key);
      assert.equal(stored?.state, 'settled');
      assert.equal(stored?.payer, '0xPAYER');
      assert.equal(stored?.txHash, '0xfeed');
      assert.deepEqual(stored?.result, result);
      assert.equal(JSON.stringify(stored?.result?.body), JSON.stringify(result.body), 'key order is kept for replays');
      assert.ok(Date.parse(stored!.updatedAt) >= Date.parse(stored!.createdAt));
      assert.equal(await ledger.transition(p.key, ['settled'], { state: 'settled', result: null }), true);
      assert.equal((await ledger.get(p.key))?.result, null);
    });

    test('findByTransaction: every payment the transaction settled (several when batched)', async () => {
      const p = payment();
      const tx = `0xtx${serial}`;
      await ledger.reserve(p);
      await ledger.transition(p.key, ['reserved'], { state: 'settled', txHash: tx });
      assert.deepEqual((await ledger.findByTransaction(tx)).map((found) => found.key), [p.key]);
      const q = payment();
      await ledger.reserve(q);
      await ledger.transition(q.key, ['reserved'], { state: 'settled', txHash: tx });
      assert.deepEqual((await ledger.findByTransaction(tx)).map((found) => found.key).sort(), [p.key, q.key].sort());
      assert.deepEqual(await ledger.findByTransaction('0xnothing'), []);
    });

    test('claimPending: a claimed row is not claimed again until its lease runs out', async () => {
      const first = await pendingPayment(ledger, '0x01');
      const second = await pendingPayment(ledger);
      const settled = await pendingPayment(ledger);
      await ledger.transition(settled.key, ['pending'], { state: 'settled' });
      await ledger.reserve(payment()); // reserved rows are not pending

      const claimed = await ledger.claimPending(10, 400);
      assert.deepEqual(claimed.map((r) => r.key), [first.key, second.key]);
      assert.ok(claimed.every((r) => r.state === 'pending' && r.leaseUntil && Date.parse(r.leaseUntil) > Date.now()));
      assert.equal(claimed[0]?.txHash, '0x01');
      assert.deepEqual(await ledger.claimPending(10, 400), [], 'both are leased');
      assert.equal((await ledger.listPending(10)).length, 2, 'listPending ignores leases');

      await sleep(450);
      const reclaimed = await ledger.claimPending(1, 60_000);
      assert.deepEqual(reclaimed.map((r) => r.key), [first.key], 'the limit is honoured, oldest first');
      assert.deepEqual((await ledger.claimPending(10, 60_000)).map((r) => r.key), [second.key]);
      assert.deepEqual(await ledger.claimPending(10, 60_000), []);
    });

    test('claimPending: rows updated within idleMs are left to the request settling them', async () => {
      const p = await pendingPayment(ledger);
      assert.deepEqual(await ledger.claimPending(10, 1_000, 60_000), []);
      await sleep(150);
      assert.deepEqual((await ledger.claimPending(10, 1_000, 100)).map((r) => r.key), [p.key]);
    });

    test('claimPending: concurrent claimers split the rows, none claimed twice', async () => {
      const keys = [];
      for (let i = 0; i < 30; i++) keys.push((await pendingPayment(ledger)).key);
      const batches = await Promise.all(Array.from({ length: 8 }, () => ledger.claimPending(5, 60_000)));
      const claimed = batches.flat().map((r) => r.key);
      assert.equal(new Set(claimed).size, claimed.length, 'no row handed out twice');
      const rest = await ledger.claimPending(100, 60_000);
      assert.deepEqual([...claimed, ...rest.map((r) => r.key)].sort(), [...keys].sort());
    });

    test('a re-reserved payment drops its old lease', async () => {
      const p = await pendingPayment(ledger);
      await ledger.claimPending(10, 60_000);
      await ledger.transition(p.key, ['pending'], { state: 'failed' });
      await ledger.reserve(p);
      assert.equal((await ledger.get(p.key))?.leaseUntil, null);
    });

    test('listStale: reserved/verified rows older than the cutoff', async () => {
      const reserved = payment();
      const verified = payment();
      await ledger.reserve(reserved);
      await ledger.reserve(verified);
      await ledger.transition(verified.key, ['reserved'], { state: 'verified' });
      await pendingPayment(ledger);
      await sleep(20);
      const stale = await ledger.listStale(new Date(), 10);
      assert.deepEqual(stale.map((r) => r.key).sort(), [reserved.key, verified.key].sort());
      assert.deepEqual(await ledger.listStale(new Date(Date.now() - 60_000), 10), []);
    });

    test('listPayments: newest first, every fact but the result body and the payload', async () => {
      const older = payment({ network: 'polygon', model: 'preview-image' });
      await ledger.reserve(older);
      await sleep(5);
      const newer = await pendingPayment(ledger, '0xfeed');
      const page = await ledger.listPayments({}, 10);
      assert.deepEqual(page.payments.map((p) => p.key), [newer.key, older.key]);
      assert.equal(page.next, null, 'one page holds everything');
      const [first, second] = page.payments;
      assert.ok(first && second);
      assert.equal('result' in first, false);
      assert.equal('payload' in first, false);
      assert.equal(first.resultAvailable, true);
      assert.equal(second.resultAvailable, false);
      assert.equal(first.state, 'pending');
      assert.equal(first.txHash, '0xfeed');
      assert.deepEqual(first.requirements, newer.requirements);
      assert.equal(second.network, 'polygon');
      assert.equal(second.model, 'preview-image');
      assert.equal(second.amount, '10000');
      assert.ok(Date.parse(first.createdAt) >= Date.parse(second.createdAt));
    });

    test('listPayments: filters by state, network, model, payer (EVM in any case) and creation time', async () => {
      const checksummed = '0xAbCdEf0000000000000000000000000000000001';
      const a = payment({ network: 'base', model: 'm-chat', payer: checksummed });
      const b = payment({ network: 'polygon', model: 'm-image' });
      const c = payment({ network: 'base', model: 'm-image', payer: 'So1anaPayerBase58' });
      for (const p of [a, b, c]) await ledger.reserve(p);
      await ledger.transition(a.key, ['reserved'], { state: 'settled', txHash: '0xa' });
      await ledger.transition(b.key, ['reserved'], { state: 'released' });
      await backdate(c.key, new Date('2030-01-15T10:00:00Z'));
      const keys = async (filter: Parameters<Ledger['listPayments']>[0]) =>
        (await ledger.listPayments(filter, 10)).payments.map((p) => p.key).sort();

      assert.deepEqual(await keys({ state: 'settled' }), [a.key]);
      assert.deepEqual(await keys({ state: 'released' }), [b.key]);
      assert.deepEqual(await keys({ network: 'base' }), [a.key, c.key].sort());
      assert.deepEqual(await keys({ model: 'm-image' }), [b.key, c.key].sort());
      assert.deepEqual(await keys({ network: 'base', model: 'm-image' }), [c.key]);
      assert.deepEqual(await keys({ payer: checksummed.toLowerCase() }), [a.key], 'EVM addresses match in any case');
      assert.deepEqual(await keys({ payer: checksummed.toUpperCase().replace('0X', '0x') }), [a.key]);
      assert.deepEqual(await keys({ payer: 'So1anaPayerBase58' }), [c.key]);
      assert.deepEqual(await keys({ payer: 'so1anapayerbase58' }), [], 'base58 is case-sensitive');
      assert.deepEqual(await keys({ from: new Date('2030-01-15T00:00:00Z'), before: new Date('2030-01-16T00:00:00Z') }), [c.key]);
      assert.deepEqual(await keys({ from: new Date('2030-01-15T10:00:00.001Z') }), [], '`from` is inclusive, to the millisecond');
      assert.deepEqual(await keys({ before: new Date('2030-01-15T10:00:00Z') }), [a.key, b.key].sort(), '`before` is exclusive');
      assert.deepEqual(await keys({ state: 'pending' }), []);
    });

    test('listPayments: pages follow `next` to the end, none repeated or skipped, ties on the timestamp included', async () => {
      const spaced: string[] = [];
      for (let i = 0; i < 5; i++) {
        const p = payment();
        await ledger.reserve(p);
        spaced.push(p.key);
        await sleep(3);
      }
      // reserved at once: several share a millisecond (SQLite) so the key breaks the tie
      const burst = Array.from({ length: 12 }, () => payment({ network: 'polygon' }));
      await Promise.all(burst.map((p) => ledger.reserve(p)));
      const tied = Array.from({ length: 4 }, () => payment({ network: 'polygon' }));
      for (const p of tied) await ledger.reserve(p);
      await Promise.all(tied.map((p) => backdate(p.key, new Date('2020-02-01T00:00:00.123Z'))));

      const everything = (await ledger.listPayments({}, 1000)).payments.map((p) => p.key);
      assert.equal(everything.length, 21);
      assert.deepEqual(everything.slice(-4), tied.map((p) => p.key).sort().reverse(), 'the oldest, one timestamp: by key, descending');
      for (const limit of [1, 2, 5, 20, 21]) {
        const pages = await allPages(ledger, {}, limit);
        assert.ok(pages.every((p) => p.length <= limit));
        assert.deepEqual(pages.flat().map((p) => p.key), everything, `pages of ${limit} read everything once, in order`);
      }
      const polygon = (await allPages(ledger, { network: 'polygon' }, 3)).flat().map((p) => p.key);
      assert.deepEqual([...polygon].sort(), [...burst, ...tied].map((p) => p.key).sort(), 'paging under a filter');
      // the five spaced rows were created in order, newest listed first (after the newer burst)
      assert.deepEqual(everything.filter((k) => spaced.includes(k)), [...spaced].reverse());
      assert.deepEqual((await ledger.listPayments({ state: 'failed' }, 5)).payments, []);
    });

    test('revenue: settled payments only, summed exactly per UTC day, network and model (beyond 2^53)', async () => {
      const settle = async (overrides: Partial<NewPayment>, at: Date, settledAmount?: string) => {
        const p = payment(overrides);
        await ledger.reserve(p);
        await ledger.transition(p.key, ['reserved'], { state: 'settled', txHash: `0x${serial}`, settledAmount });
        await backdate(p.key, at);
        return p;
      };
      const day1 = new Date('2030-03-01T00:00:00Z');
      const day1Late = new Date('2030-03-01T23:59:59.999Z');
      const day2 = new Date('2030-03-02T12:00:00Z');
      const big = '9007199254740993'; // 2^53 + 1: not a double
      await settle({ amount: big, model: 'm-chat' }, day1);
      await settle({ amount: big, model: 'm-chat' }, day1Late);
      await settle({ amount: '1', model: 'm-chat' }, day1);
      await settle({ amount: '123456789012345678901234567890', model: 'm-image' }, day1);
      await settle({ amount: '999999999999999999999999999999', model: 'm-image' }, day1);
      await settle({ amount: '5000', model: 'm-chat', network: 'polygon' }, day1);
      await settle({ amount: '70000', model: 'm-chat' }, day2);
      // upto: a ceiling of 1,309 authorized, 431 settled; revenue is what was settled
      const metered = await settle({ amount: '1309', model: 'm-chat' }, day2, '431');
      assert.deepEqual(
        [(await ledger.get(metered.key))?.amount, (await ledger.get(metered.key))?.settledAmount],
        ['1309', '431'],
        'the ledger keeps both the authorized maximum and the settled amount',
      );
      // not settled: never revenue
      for (const state of ['failed', 'released', 'pending', 'verified'] as const) {
        const p = payment({ amount: '777', model: 'm-chat' });
        await ledger.reserve(p);
        await ledger.transition(p.key, ['reserved'], { state });
        await backdate(p.key, day1);
      }
      const legacy = await settle({ amount: '3', model: '' }, day2);
      assert.ok(legacy);

      const rows = await ledger.revenue({});
      assert.deepEqual(rows, [
        { day: '2030-03-01', network: 'base', model: 'm-chat', count: 3, amount: '18014398509481987' },
        { day: '2030-03-01', network: 'base', model: 'm-image', count: 2, amount: '1123456789012345678901234567889' },
        { day: '2030-03-01', network: 'polygon', model: 'm-chat', count: 1, amount: '5000' },
        { day: '2030-03-02', network: 'base', model: '', count: 1, amount: '3' },
        { day: '2030-03-02', network: 'base', model: 'm-chat', count: 2, amount: '70431' },
      ]);
      assert.equal(BigInt(big) * 2n + 1n, 18014398509481987n);
      assert.deepEqual(
        (await ledger.revenue({ from: new Date('2030-03-02T00:00:00Z') })).map((r) => r.amount),
        ['3', '70431'],
      );
      assert.deepEqual(
        (await ledger.revenue({ before: new Date('2030-03-01T23:59:59.999Z') })).map((r) => [r.model, r.count]),
        [['m-chat', 2], ['m-image', 2], ['m-chat', 1]],
        '`before` is exclusive',
      );
      assert.deepEqual(await ledger.revenue({ from: new Date('2031-01-01T00:00:00Z') }), []);
    });

    test('revenue counts the calls paid on payment channels (their charges) beside settled payments; a charge keeps its result and its files', async () => {
      const channels = ledger.channels!;
      const config = {
        payer: '0x1111111111111111111111111111111111111111',
        payerAuthorizer: '0x1111111111111111111111111111111111111111',
        receiver: '0x2222222222222222222222222222222222222222',
        receiverAuthorizer: '0x3333333333333333333333333333333333333333',
        token: '0x4444444444444444444444444444444444444444',
        withdrawDelay: 900,
        salt: `0x${'00'.repeat(32)}`,
      } as const;
      const channelId = `0x${'ab'.repeat(32)}`;
      const charge = async (cumulative: bigint, amount: bigint, model: string, at: Date) =>
        channels.commit(
          channelId,
          (current) => ({ ...(current ?? newChannelRecord(channelId, 'base', config, at.getTime())), chargedCumulative: cumulative, signedMaxClaimable: cumulative }),
          { channelId, cumulative, network: 'base', payer: config.payer, model, amount, requestHash: `h${cumulative}`, result: { status: 200, body: { n: Number(cumulative) }, media: [`file-${cumulative}`] }, createdAt: at.getTime() },
        );
      const day = new Date('2030-04-01T10:00:00Z');
      const p = payment({ amount: '500', model: 'm-chat' });
      await ledger.reserve(p);
      await ledger.transition(p.key, ['reserved'], { state: 'settled', txHash: '0xsettled' });
      await backdate(p.key, day);
      await charge(700n, 700n, 'm-chat', day);
      await charge(1_000n, 300n, 'm-image', day);
      await charge(1_009_007_199_254_740_993n, 1_009_007_199_254_739_993n, 'm-chat', new Date('2030-04-02T00:00:00Z'));

      assert.deepEqual(await ledger.revenue({ from: new Date('2030-04-01T00:00:00Z') }), [
        { day: '2030-04-01', network: 'base', model: 'm-chat', count: 2, amount: '1200' },
        { day: '2030-04-01', network: 'base', model: 'm-image', count: 1, amount: '300' },
        { day: '2030-04-02', network: 'base', model: 'm-chat', count: 1, amount: '1009007199254739993' },
      ]);
      const kept = await channels.chargeAt(channelId, 1_000n);
      assert.deepEqual([kept?.amount, kept?.requestHash, kept?.result.body], [300n, 'h1000', { n: 1000 }]);
      assert.equal((await channels.get(channelId))?.chargedCumulative, 1_009_007_199_254_740_993n);
      // a file is its charge's: found on the channel that paid for it, and on no other
      assert.equal((await channels.chargeHolding(channelId, 'file-1000'))?.cumulative, 1_000n);
      assert.equal(await channels.chargeHolding(channelId, 'file-1'), undefined);
      assert.equal(await channels.chargeHolding(`0x${'cd'.repeat(32)}`, 'file-1000'), undefined);
      assert.equal(await channels.pruneCharges(new Date('2030-04-02T00:00:00Z'), 10), 2, 'charges made before the cutoff');
      assert.equal(await channels.chargeAt(channelId, 1_000n), undefined);
      assert.ok(await channels.get(channelId), 'the channel itself stays');
      // a voucher whose ceiling is above what its channel charged (a metered call's): its charge stays, whatever its age
      const metered = `0x${'ef'.repeat(32)}`;
      await channels.commit(
        metered,
        (current) => ({ ...(current ?? newChannelRecord(metered, 'base', config, day.getTime())), chargedCumulative: 20n, signedMaxClaimable: 10_000n }),
        { channelId: metered, cumulative: 10_000n, network: 'base', payer: config.payer, model: 'm-chat', amount: 20n, requestHash: 'h', result: { status: 200, body: {}, media: [] }, createdAt: day.getTime() },
      );
      assert.equal(await channels.pruneCharges(new Date('2030-05-01T00:00:00Z'), 10), 1, 'only the one the channel caught up with');
      assert.ok(await channels.chargeAt(metered, 10_000n));
    });

    test('pruneFinal: only final rows last updated before the cutoff; in-flight rows, recent rows and refunds owed stay', async () => {
      const old = new Date(Date.now() - 100 * DAY);
      const cutoff = new Date(Date.now() - 90 * DAY);
      const gone: string[] = [];
      const kept: string[] = [];
      const result = { status: 200, body: {}, media: [] };
      for (const state of ['settled', 'failed', 'released'] as const) {
        const oldRow = payment();
        await ledger.reserve(oldRow);
        await ledger.transition(oldRow.key, ['reserved'], { state, ...(state === 'settled' ? { result } : {}) });
        await backdate(oldRow.key, old);
        gone.push(oldRow.key);
        const recent = payment();
        await ledger.reserve(recent);
        await ledger.transition(recent.key, ['reserved'], { state });
        kept.push(recent.key);
      }
      for (const state of ['reserved', 'verified', 'pending'] as const) {
        const inFlight = payment();
        await ledger.reserve(inFlight);
        if (state !== 'reserved') await ledger.transition(inFlight.key, ['reserved'], { state });
        await backdate(inFlight.key, old);
        kept.push(inFlight.key);
      }
      // settled, its work failed after: no result, owed a refund
      const owed = payment();
      await ledger.reserve(owed);
      await ledger.transition(owed.key, ['reserved'], { state: 'settled', error: 'payment_attempts_exhausted' });
      await backdate(owed.key, old);
      kept.push(owed.key);
      assert.equal(await ledger.pruneFinal(cutoff, 2), 2, 'the limit is honoured');
      assert.equal(await ledger.pruneFinal(cutoff, 100), 1);
      assert.equal(await ledger.pruneFinal(cutoff, 100), 0, 'nothing left to prune');
      for (const key of gone) assert.equal(await ledger.get(key), undefined);
      for (const key of kept) assert.ok(await ledger.get(key), `${key} survives`);
      // a pruned key is a new key again (its proof is spent on-chain, so verification refuses it anyway)
      assert.equal((await ledger.reserve({ ...payment(), key: gone[0]! })).reserved, true);
    });

    test('50 concurrent reservations of one key: exactly one wins', async () => {
      const p = payment();
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(p)));
      assert.equal(outcomes.filter((o) => o.reserved).length, 1);
      assert.ok(outcomes.every((o) => o.reserved || o.existing.key === p.key));
    });

    test('findPaidResult: the payer\'s settled result for that request, EVM addresses in any case', async () => {
      const settled = await pendingPayment(ledger, '0xtx-paid');
      await ledger.transition(settled.key, ['pending'], { state: 'settled' });
      const unsettled = await pendingPayment(ledger, '0xtx-pending');
      assert.equal((await ledger.findPaidResult(settled.payer.toUpperCase().replace('0X', '0x'), settled.requestHash))?.key, settled.key);
      assert.equal(await ledger.findPaidResult(settled.payer, unsettled.requestHash), undefined, 'not settled yet');
      assert.equal(await ledger.findPaidResult(settled.payer, 'another-request'), undefined);
      assert.equal(await ledger.findPaidResult('0x00000000000000000000000000000000000000cc', settled.requestHash), undefined);
      const solana = payment({ network: 'solana', payer: 'So1anaPayerAddressXyz' });
      await ledger.reserve(solana);
      await ledger.transition(solana.key, ['reserved'], { state: 'settled', result: { status: 200, body: { ok: 2 }, media: [] } });
      assert.deepEqual((await ledger.findPaidResult('So1anaPayerAddressXyz', solana.requestHash))?.result?.body, { ok: 2 });
      assert.equal(await ledger.findPaidResult('so1anapayeraddressxyz', solana.requestHash), undefined, 'base58 is case-sensitive');
    });

    test('useNonce: a sign-in nonce is used once, even by 20 callers at once; expired ones are forgotten', async () => {
      const soon = new Date(Date.now() + 60_000);
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => ledger.useNonce('n0nce-shared', soon)));
      assert.equal(outcomes.filter(Boolean).length, 1);
      assert.equal(await ledger.useNonce('n0nce-shared', soon), false);
      assert.equal(await ledger.useNonce('n0nce-other', soon), true);
      assert.equal(await ledger.useNonce('n0nce-expired', new Date(Date.now() - 1000)), true);
      assert.equal(await ledger.useNonce('n0nce-expired', soon), true, 'an expired record is pruned, not kept forever');
    });

    test('bindPaymentId: an id is bound to the first payment it came with, even among 20 callers at once', async () => {
      const payments = Array.from({ length: 20 }, () => payment());
      for (const p of payments) await ledger.reserve(p);
      const outcomes = await Promise.all(payments.map((p, i) => ledger.bindPaymentId('pay_0123456789abcdef', `hash-${i}`, p.key)));
      assert.equal(new Set(outcomes).size, 1);
      const [bound] = outcomes;
      assert.equal(await ledger.bindPaymentId('pay_0123456789abcdef', 'hash-other', payments[0]!.key), bound);
      assert.equal(await ledger.bindPaymentId('pay_0123456789abcdef', bound!, payments[0]!.key), bound);
      assert.equal(await ledger.bindPaymentId('pay_fedcba9876543210', 'hash-x', payments[1]!.key), 'hash-x');
    });

    test('bindPaymentId: a payment released or failed (nothing charged) frees its id; one in flight or settled keeps it', async () => {
      const id = 'pay_squatted_0123456789';
      const squatter = payment();
      const honest = payment();
      await ledger.reserve(squatter);
      await ledger.reserve(honest);
      assert.equal(await ledger.bindPaymentId(id, 'hash-squatter', squatter.key), 'hash-squatter');
      assert.equal(await ledger.bindPaymentId(id, 'hash-honest', honest.key), 'hash-squatter', 'in flight: the id stays its own');
      assert.ok(await ledger.transition(squatter.key, ['reserved'], { state: 'released', error: 'the client left' }));
      assert.equal(await ledger.bindPaymentId(id, 'hash-honest', honest.key), 'hash-honest', 'released: the id is free for the next payment');

      const settled = await pendingPayment(ledger);
      assert.ok(await ledger.transition(settled.key, ['pending'], { state: 'settled', txHash: '0xabc' }));
      assert.equal(await ledger.bindPaymentId('pay_settled_0123456789', 'hash-settled', settled.key), 'hash-settled');
      assert.ok(await ledger.transition(honest.key, ['reserved'], { state: 'failed', error: 'expired' }));
      assert.equal(await ledger.bindPaymentId('pay_settled_0123456789', 'hash-other', honest.key), 'hash-settled', 'settled: bound for good');
      assert.equal(await ledger.bindPaymentId(id, 'hash-squatter', squatter.key), 'hash-squatter', 'failed: free again');
    });

    test('prunePaymentIds: ids bound before the cutoff go, in batches; recent ones stay bound; a pruned id binds afresh', async () => {
      const old = ['pay_old_a_0123456789', 'pay_old_b_0123456789', 'pay_old_c_0123456789'];
      const held = payment();
      await ledger.reserve(held);
      for (const id of old) {
        await ledger.bindPaymentId(id, `hash-${id}`, held.key);
        await backdate(id, new Date(Date.now() - 100 * DAY));
      }
      await ledger.bindPaymentId('pay_recent_0123456789', 'hash-recent', held.key);
      const cutoff = new Date(Date.now() - 90 * DAY);
      assert.equal(await ledger.prunePaymentIds(cutoff, 2), 2, 'the limit is honoured');
      assert.equal(await ledger.prunePaymentIds(cutoff, 100), 1);
      assert.equal(await ledger.prunePaymentIds(cutoff, 100), 0, 'nothing left to prune');
      assert.equal(await ledger.bindPaymentId('pay_recent_0123456789', 'hash-other', held.key), 'hash-recent', 'a recent id stays bound');
      assert.equal(await ledger.bindPaymentId(old[0]!, 'hash-other', held.key), 'hash-other', 'a pruned id is free again');
    });

    test('50 concurrent re-reservations of one released key: exactly one wins', async () => {
      const p = payment();
      await ledger.reserve(p);
      await ledger.transition(p.key, ['reserved'], { state: 'released' });
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(p)));
      assert.equal(outcomes.filter((o) => o.reserved).length, 1);
    });
  });
}

// ---- SQLite: a fresh file per test ----
const sqliteDir = mkdtempSync(join(tmpdir(), 'x402-ledger-test-'));
let sqliteFiles = 0;
after(() => rmSync(sqliteDir, { recursive: true, force: true }));
ledgerSuite('SqliteLedger', async () => {
  const path = join(sqliteDir, `ledger-${++sqliteFiles}.db`);
  return {
    ledger: new SqliteLedger(path),
    async backdate(key, at) {
      const { DatabaseSync } = await import('node:sqlite');
      const db = new DatabaseSync(path);
      db.prepare('UPDATE payments SET created_at = ?, updated_at = ? WHERE key = ?').run(at.toISOString(), at.toISOString(), key);
      db.prepare('UPDATE payment_ids SET created_at = ? WHERE id = ?').run(at.toISOString(), key);
      db.close();
    },
  };
});

// ---- PostgreSQL: one throwaway server, a fresh database per test ----
let postgres: PostgresServer | undefined;
before(async () => {
  postgres = await startPostgres();
});
after(() => postgres?.stop());
ledgerSuite('PostgresLedger', async () => {
  if (!postgres) throw new Error('the PostgreSQL test server did not start');
  const url = await postgres.createDatabase();
  return {
    ledger: await PostgresLedger.open({ connectionString: url }),
    async backdate(key, at) {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query('UPDATE payments SET created_at = $1, updated_at = $1 WHERE key = $2', [at, key]);
      await client.query('UPDATE payment_ids SET created_at = $1 WHERE id = $2', [at, key]);
      await client.end();
    },
  };
});

describe('reservation holders: a dead instance\'s reservation is taken over once its lease runs out', () => {
  const engines: [string, (holder: ReservationHolder) => Promise<Ledger>][] = [
    ['SQLite', async (holder) => new SqliteLedger(join(sqliteDir, 'holders.db'), holder)],
    ['PostgreSQL', async (holder) => PostgresLedger.open({ connectionString: (holdersUrl ??= await postgres!.createDatabase()), holder })],
  ];
  let holdersUrl: string | undefined;
  for (const [engine, open] of engines) {
    test(engine, async () => {
      const alive = await open({ instanceId: 'alive', leaseMs: 60_000 });
      const dying = await open({ instanceId: 'dying', leaseMs: 1 });
      const survivor = await open({ instanceId: 'survivor', leaseMs: 60_000 });
      try {
        const held = payment();
        assert.deepEqual(await alive.reserve(held), { reserved: true });
        assert.equal(await alive.heartbeat(), 1);
        assert.equal((await survivor.reserve(held)).reserved, false, 'a live holder keeps its reservation');
        assert.equal(await survivor.releaseStale(held.key, new Date(0), 'x'), false);

        const orphan = payment();
        assert.deepEqual(await dying.reserve(orphan), { reserved: true });
        assert.ok(await dying.transition(orphan.key, ['reserved'], { state: 'verified', payer: orphan.payer }));
        // its holder beats no more: the 1 ms lease runs out, then the next reserve of the key takes it over
        let outcome = await survivor.reserve(orphan);
        while (!outcome.reserved) {
          await sleep(5);
          outcome = await survivor.reserve(orphan);
        }
        assert.equal((await survivor.get(orphan.key))?.state, 'reserved');
        assert.equal(await survivor.heartbeat(), 1, 'now the survivor\'s');
        assert.equal((await dying.reserve(orphan)).reserved, false);

        const abandoned = payment();
        assert.deepEqual(await dying.reserve(abandoned), { reserved: true });
        let stale = await alive.listStale(new Date(0), 100);
        while (!stale.some((row) => row.key === abandoned.key)) {
          await sleep(5);
          stale = await alive.listStale(new Date(0), 100);
        }
        assert.ok(!stale.some((row) => row.key === held.key), 'a held reservation is not stale');
        assert.equal(await alive.releaseStale(abandoned.key, new Date(0), 'abandoned before settlement'), true);
        assert.equal((await alive.get(abandoned.key))?.state, 'released');
      } finally {
        await Promise.all([alive.close(), dying.close(), survivor.close()]);
      }
    });
  }
});

describe('SQLite migrations', () => {
  test('a database made by the first migration is upgraded in place (lease and model columns added)', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const path = join(sqliteDir, 'old.db');
    const old = new SqliteLedger(path);
    const before = payment();
    await old.reserve(before);
    await old.close();
    // roll the file back to migration 1, as an older release left it
    const db = new DatabaseSync(path);
    db.exec(`DROP TABLE siwx_nonces; DROP TABLE payment_ids; DROP INDEX payments_request_hash;
             DROP INDEX payments_created; ALTER TABLE payments DROP COLUMN model; ALTER TABLE payments DROP COLUMN lease_until;
             ALTER TABLE payments DROP COLUMN settled_amount;
             ALTER TABLE payments DROP COLUMN held_by; ALTER TABLE payments DROP COLUMN held_until;
             ALTER TABLE payments DROP COLUMN failed_attempts;
             DELETE FROM schema_migrations WHERE version > 1;`);
    db.close();
    const upgraded = new SqliteLedger(path);
    assert.equal((await upgraded.get(before.key))?.model, '', 'rows from before the model column get an empty model');
    assert.equal((await upgraded.get(before.key))?.failedAttempts, 0, 'and no failed attempts');
    const versions = new DatabaseSync(path).prepare('SELECT version FROM schema_migrations ORDER BY version').all();
    assert.deepEqual(versions.map((row) => row.version), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'numbered as on PostgreSQL (8 is a no-op here)');
    const p = await pendingPayment(upgraded);
    assert.equal((await upgraded.claimPending(1, 1_000))[0]?.key, p.key);
    assert.equal((await upgraded.get(p.key))?.model, 'local/demo-bigram');
    await upgraded.close();
  });
});

describe('PostgreSQL migrations', () => {
  test('instances starting together migrate once, under the advisory lock', async () => {
    const url = await postgres!.createDatabase();
    const ledgers = await Promise.all(Array.from({ length: 6 }, () => PostgresLedger.open({ connectionString: url })));
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    await client.end();
    assert.deepEqual(rows.map((r) => r.version), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await Promise.all(ledgers.map((l) => l.close()));
  });

  test('a database at migration 2 gets the model column; its rows an empty model', async () => {
    const url = await postgres!.createDatabase();
    const old = await PostgresLedger.open({ connectionString: url });
    const before = payment();
    await old.reserve(before);
    await old.close();
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP TABLE siwx_nonces; DROP TABLE payment_ids; DROP TABLE settlement_nonces; DROP INDEX payments_request_hash; DROP INDEX payments_created;
      ALTER TABLE payments DROP COLUMN model; ALTER TABLE payments DROP COLUMN settled_amount;
      ALTER TABLE payments DROP COLUMN held_by; ALTER TABLE payments DROP COLUMN held_until; ALTER TABLE payments DROP COLUMN failed_attempts;
      DELETE FROM schema_migrations WHERE version >= 3`);
    await client.end();
    const upgraded = await PostgresLedger.open({ connectionString: url });
    assert.equal((await upgraded.get(before.key))?.model, '');
    assert.deepEqual((await upgraded.listPayments({ model: '' }, 10)).payments.map((p) => p.key), [before.key]);
    await upgraded.close();
  });
});

describe('engine selection', () => {
  test('DATABASE_URL (or databaseUrl) selects PostgreSQL; without it, SQLite in the data dir', async () => {
    const dataDir = join(sqliteDir, 'selection');
    const url = await postgres!.createDatabase();
    const withUrl = loadConfig({ DATABASE_URL: url }, { dataDir });
    assert.equal(withUrl.databaseUrl, url);
    const shared = await openLedger(withUrl);
    assert.equal(shared.engine, 'postgres');
    assert.ok(shared.ledger instanceof PostgresLedger);
    await shared.ledger.close();
    mkdirSync(dataDir, { recursive: true });
    const embedded = await openLedger(loadConfig({}, { dataDir }));
    assert.equal(embedded.engine, 'sqlite');
    await embedded.ledger.close();
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }, {}), /postgres/);
  });
});
