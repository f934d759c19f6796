// What the client library and the proxy sign, whatever a gateway's 402 names: USDC of the network, whole atomic
// units, at most an hour of validity. Anything else is passed over, and with nothing left nothing is signed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired } from '@x402/core/types';
import { MAX_VALIDITY_SECONDS, offerProblem, signableOffers } from './offer-terms.ts';
import { OfferRefusedError } from './errors.ts';
import { NETWORKS } from '../x402/networks.ts';
import { PaymentPolicy, PayeeRefused } from './proxy/payment-policy.ts';
import { Budget } from './proxy/budget.ts';
import { SpendLog } from './proxy/spend-log.ts';

const payTo = `0x${'ab'.repeat(20)}`;
const usdcOffer = { scheme: 'exact', network: NETWORKS.base.caip2, asset: NETWORKS.base.usdc, amount: '10000', payTo, maxTimeoutSeconds: 60, extra: {} };

test('an offer in the network’s USDC, for whole atomic units, valid up to an hour, may be signed (v1 and v2 wires)', () => {
  assert.equal(offerProblem(usdcOffer), undefined);
  assert.equal(offerProblem({ ...usdcOffer, asset: NETWORKS.base.usdc.toLowerCase() }), undefined);
  assert.equal(offerProblem({ network: 'solana', asset: NETWORKS.solana.usdc, payTo: 'x', maxAmountRequired: '1', maxTimeoutSeconds: MAX_VALIDITY_SECONDS }), undefined);
  assert.equal(offerProblem(usdcOffer, payTo.toUpperCase().replace('0X', '0x')), undefined, 'the payee named, in any letter case');
});

test('another token, a lying amount or a long-lived signature is named as the reason nothing is signed', () => {
  const problems = [
    { ...usdcOffer, asset: `0x${'de'.repeat(20)}` },
    { ...usdcOffer, asset: NETWORKS.polygon.usdc },
    { ...usdcOffer, network: 'eip155:1' },
    ...['1e3', '0.5', '-1', '', ' 1', '9'.repeat(31)].map((amount) => ({ ...usdcOffer, amount })),
    ...[0, -1, 1.5, MAX_VALIDITY_SECONDS + 1, 864_000].map((maxTimeoutSeconds) => ({ ...usdcOffer, maxTimeoutSeconds })),
  ].map((offer) => offerProblem(offer));
  for (const problem of problems) assert.equal(typeof problem, 'string');
  assert.match(problems[0]!, /not in USDC on base/);
  assert.match(problems[3]!, /"1e3" is not a whole number of atomic units/);
  assert.match(problems.at(-1)!, /valid for 864000 seconds \(at most 3600/);
  assert.match(offerProblem(usdcOffer, `0x${'cd'.repeat(20)}`)!, /asks to pay "0xabab.*", not 0xcdcd.* \(payTo\)/);
});

test('a foreign-token offer listed first is passed over for the USDC one; with only bad offers, OfferRefusedError', () => {
  const foreign = { ...usdcOffer, asset: `0x${'de'.repeat(20)}`, amount: '1' };
  assert.deepEqual(signableOffers([foreign, usdcOffer], 'base'), [usdcOffer]);
  assert.throws(() => signableOffers([foreign], 'base'), (error) => error instanceof OfferRefusedError && /nothing was signed/.test(error.message));
});

test('the proxy’s policy refuses the same offers, in its own error, before anything is signed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'x402-offer-'));
  try {
    const budget = new Budget(new SpendLog(join(dir, 'spend.jsonl')), {});
    const policy = new PaymentPolicy({ budget, gateway: 'http://127.0.0.1:1', network: 'base', payTo, signable: ['exact'] });
    const required = (offer: object) => ({ x402Version: 2, resource: { url: 'x' }, accepts: [offer] }) as unknown as PaymentRequired;
    assert.deepEqual(policy.offers(required(usdcOffer)), [usdcOffer]);
    assert.throws(() => policy.offers(required({ ...usdcOffer, maxTimeoutSeconds: 86_400 })), (error) => error instanceof PayeeRefused && /valid for 86400 seconds/.test(error.message));
    assert.throws(() => policy.offers(required({ ...usdcOffer, amount: '1e3' })), PayeeRefused);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
