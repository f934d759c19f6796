// The gate's and the reconciler's PaymentObserver, with each verification and settlement also told to the trace
// of the paid call it runs for (currentCallTrace()): its outcome, duration, amount and transaction. The gate's
// logic is untouched; outside a traced call (the reconciler, an untraced call) this adds nothing.
import type { PaymentLabels, PaymentObserver } from '../payments/payment-metrics.ts';
import { currentCallTrace } from './paid-call-trace.ts';

export function tracedPayments(inner: PaymentObserver): PaymentObserver {
  return {
    async verify(labels, verification) {
      const trace = currentCallTrace();
      if (!trace) return inner.verify(labels, verification);
      const started = performance.now();
      let outcome = 'error';
      let payer: string | undefined;
      try {
        const result = await inner.verify(labels, verification);
        outcome = result.isValid ? 'valid' : 'invalid';
        payer = result.payer;
        return result;
      } finally {
        trace.verified(labels, outcome, elapsed(started), payer);
      }
    },
    async settle(labels, amount, settlement) {
      const trace = currentCallTrace();
      if (!trace) return inner.settle(labels, amount, settlement);
      const started = performance.now();
      let outcome = 'pending'; // a throw leaves the outcome unknown, as the metrics count it
      let transaction: string | undefined;
      try {
        const result = await inner.settle(labels, amount, settlement);
        outcome = result.status === 'unknown' ? 'pending' : result.status;
        transaction = 'transaction' in result ? result.transaction : undefined;
        return result;
      } finally {
        trace.settled(labels, amount, outcome, elapsed(started), transaction);
      }
    },
    reconciled(labels: PaymentLabels, amount, outcome) {
      inner.reconciled(labels, amount, outcome);
    },
  };
}

/** milliseconds since `started`, to the microsecond */
const elapsed = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;
