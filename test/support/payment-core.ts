// What the payment cores' own tests (src/payments/gate.test.ts, src/payments/channels/channel-gate.test.ts) build
// their calls with, and how they read an outcome.
import assert from 'node:assert/strict';
import type { PaidCall, PaymentOutcome, WorkResult } from '../../src/payments/outcome.ts';

/** A paid call of `amount` whose work counts its runs (in `runs`) and answers `{ n }`; anything else overridden. */
export function paidCall(amount: bigint, overrides: Partial<PaidCall> & { runs?: { count: number } } = {}): PaidCall {
  const { runs = { count: 0 }, ...rest } = overrides;
  return {
    names: {
      noPayment: 'X-PAYMENT header is required',
      network: 'X-Network',
      networkField: 'X-Network',
      payment: 'PAYMENT-SIGNATURE',
      noNetwork: 'X-Network header is required',
      sameAgain: 'the same request with the same payment',
    },
    resource: 'http://gateway.test/api/v1/ai/images',
    listing: { extensions: {} },
    schemes: ['exact', 'batch-settlement'],
    model: 'test/image',
    description: 'an image',
    amount,
    maxTimeoutSeconds: 60,
    requestHash: 'request-1',
    settleFirst: () => false,
    work: async (): Promise<WorkResult> => ({ body: { n: ++runs.count }, media: [] }),
    ...rest,
  };
}

/** The outcome, asserted to be of `kind` (its JSON in the message when it is not). */
export function expectKind<K extends PaymentOutcome['kind']>(outcome: PaymentOutcome, kind: K): Extract<PaymentOutcome, { kind: K }> {
  assert.equal(outcome.kind, kind, JSON.stringify(outcome, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  return outcome as Extract<PaymentOutcome, { kind: K }>;
}
