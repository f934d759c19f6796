// The caps as a person would set them: a call's ceiling is refused by the first cap it would break, the
// windows roll (a spend an hour old no longer counts against the hour), and the refusal says when it reopens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capMessage, capRefusal, depositRoom, type Caps } from './caps.ts';
import { HOUR_MS, SpendState } from './spend-state.ts';

const T0 = Date.parse('2025-11-28T10:00:00Z');
const MINUTE = 60_000;

function spent(entries: Array<[minutesAgo: number, amount: bigint, charged?: bigint]>, now = T0): SpendState {
  const state = new SpendState();
  entries.forEach(([ago, amount, charged], i) => {
    state.apply({ kind: 'hold', id: `s${i}`, at: now - ago * MINUTE, amount: amount.toString(), scheme: 'exact', network: 'base', surface: '/v1/messages' });
    if (charged !== undefined) state.apply({ kind: 'charged', id: `s${i}`, amount: charged.toString() });
  });
  return state;
}

test('a call above --max-per-call is refused whatever else was spent', () => {
  const refusal = capRefusal({ perCall: 1000n }, new SpendState(), 1001n, T0, true);
  assert.equal(refusal?.cap, 'max-per-call');
  assert.match(capMessage(refusal!, T0), /--max-per-call 0\.001 USDC.*up to 0\.001001 USDC/);
  assert.equal(capRefusal({ perCall: 1000n }, new SpendState(), 1000n, T0, true), undefined);
});

test('--max-total counts holds at their ceiling until the receipt corrects them down, and never reopens', () => {
  const caps: Caps = { total: 10_000n };
  const held = spent([[5, 6000n]]);
  assert.equal(capRefusal(caps, held, 5000n, T0, true)?.cap, 'max-total', 'the held ceiling counts');
  held.apply({ kind: 'charged', id: 's0', amount: '1000' });
  assert.equal(capRefusal(caps, held, 5000n, T0, true), undefined, 'the charge replaced the ceiling');
  const refusal = capRefusal(caps, held, 9001n, T0, true)!;
  assert.equal(refusal.reopensAt, undefined);
  assert.match(capMessage(refusal, T0), /Spent 0\.001 USDC in all.*does not reopen: raise --max-total/);
});

test('--max-per-hour rolls: spends older than an hour stop counting; the refusal says when the window reopens', () => {
  const caps: Caps = { perHour: 10_000n };
  // 50 min ago 4000, 20 min ago 5000: 9000 in the hour
  const state = spent([[90, 9000n], [50, 4000n], [20, 5000n]]);
  assert.equal(capRefusal(caps, state, 1000n, T0, true), undefined, 'the spend of 90 minutes ago is out of the hour');
  const refusal = capRefusal(caps, state, 2000n, T0, true)!;
  assert.equal(refusal.cap, 'max-per-hour');
  assert.equal(refusal.spent, 9000n);
  // it fits once the 4000 of 50 minutes ago leaves the window, in 10 minutes
  assert.equal(refusal.reopensAt, T0 - 50 * MINUTE + HOUR_MS);
  assert.match(capMessage(refusal, T0), /in the last hour.*reopens at 2025-11-28T10:10:00\.000Z \(in 10 min\)/);
  assert.equal(capRefusal(caps, state, 2000n, T0 + 10 * MINUTE + 1, true), undefined, 'and then it does');
});

test('--max-per-day reopens when enough of the day has aged out; a call above the cap alone never fits', () => {
  const caps: Caps = { perDay: 10_000n };
  const state = spent([[23 * 60, 3000n], [22 * 60, 3000n], [60, 3000n]]);
  const refusal = capRefusal(caps, state, 5000n, T0, true)!;
  assert.equal(refusal.cap, 'max-per-day');
  assert.equal(refusal.reopensAt, T0 + 2 * HOUR_MS, 'two spends must age out: the second in two hours');
  const alone = capRefusal(caps, state, 10_001n, T0, true)!;
  assert.equal(alone.reopensAt, undefined);
  assert.match(capMessage(alone, T0), /above the cap: raise --max-per-day/);
});

test('money in a payment channel counts against --max-total for payments from the wallet and for deposits', () => {
  const state = new SpendState();
  state.apply({ kind: 'deposit', id: 'd', at: T0, amount: '8000', network: 'base', channel: '0xc', salt: '0x0' });
  state.apply({ kind: 'hold', id: 'v', at: T0, amount: '1000', scheme: 'batch-settlement', network: 'base', surface: '/v1/messages' });
  const caps: Caps = { total: 10_000n };
  assert.equal(capRefusal(caps, state, 5000n, T0, false), undefined, 'a voucher spends from the escrow');
  const wallet = capRefusal(caps, state, 5000n, T0, true)!;
  assert.equal(wallet.cap, 'max-total');
  assert.equal(wallet.escrowed, 7000n);
  assert.match(capMessage(wallet, T0), /0\.007 USDC is held in a payment channel \(x402-ai proxy --refund returns it\)/);
  assert.equal(depositRoom(caps, state), 2000n);
  state.apply({ kind: 'refund', at: T0, amount: '7000', network: 'base', channel: '0xc' });
  assert.equal(depositRoom(caps, state), 9000n, 'after the refund only the voucher’s 1000 is out of the wallet');
  assert.equal(state.walletDrop, 1000n);
});

test('a released hold counts for nothing', () => {
  const state = spent([[1, 9000n]]);
  state.apply({ kind: 'released', id: 's0' });
  assert.equal(state.total, 0n);
  assert.equal(capRefusal({ total: 10_000n, perHour: 10_000n }, state, 10_000n, T0, true), undefined);
});
