// Prometheus series for money: what the gate and the reconciler verified and settled, by network, scheme and
// model; how much settled; how long the facilitator took; how many settlements wait for reconciliation.
// The gate and the reconciler only report events (PaymentObserver); the series are this module's business.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SettleOutcome, VerifyResult } from './facilitator.ts';

export interface PaymentLabels {
  network: string;
  /** x402 scheme of the requirement paid ("exact", "upto") */
  scheme: string;
  /** catalog id of the model quoted ('' for ledger rows from before models were recorded) */
  model: string;
}

/** The labels of a ledger row (the reconciler's view of a payment). */
export const paymentLabels = (record: { network: string; model: string; requirements: unknown }): PaymentLabels => ({
  network: record.network,
  scheme: String((record.requirements as { scheme?: unknown } | null)?.scheme ?? ''),
  model: record.model,
});

/** What the gate and the reconciler tell about payments; each method passes its promise's value through. */
export interface PaymentObserver {
  verify(labels: PaymentLabels, verification: Promise<VerifyResult>): Promise<VerifyResult>;
  settle(labels: PaymentLabels, amount: bigint, settlement: Promise<SettleOutcome>): Promise<SettleOutcome>;
  /** a pending settlement whose outcome the reconciler found */
  reconciled(labels: PaymentLabels, amount: bigint | string, outcome: 'settled' | 'failed'): void;
}

/** An observer that records nothing (tests and tools that build a gate without metrics). */
export const NO_PAYMENT_OBSERVER: PaymentObserver = {
  verify: (_labels, verification) => verification,
  settle: (_labels, _amount, settlement) => settlement,
  reconciled: () => {},
};

/** facilitator round trips: a local chain answers in milliseconds, a remote facilitator or a block in seconds */
const FACILITATOR_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** how many pending payments the backlog gauge counts at most (it reads them at each scrape) */
export const BACKLOG_CAP = 1000;

export class PaymentMetrics implements PaymentObserver {
  private readonly payments: Counter<'network' | 'scheme' | 'model' | 'outcome'>;
  private readonly settledAmount: Counter<'network' | 'scheme' | 'model'>;
  private readonly verifyLatency: Histogram<'network' | 'scheme' | 'outcome'>;
  private readonly settleLatency: Histogram<'network' | 'scheme' | 'outcome'>;

  /** `pendingCount` gives the settlements waiting for the reconciler (read at each scrape) */
  constructor(registry: Registry, pendingCount: () => Promise<number>) {
    const registers = [registry];
    this.payments = new Counter({
      name: 'x402_payments_total',
      help: 'Payments by outcome: verified, invalid (verification refused), verify_error (no verdict: chain or facilitator unreachable), settled, failed, pending (settlement outcome unknown, left to the reconciler), unavailable (settlement could not be attempted: nothing sent)',
      labelNames: ['network', 'scheme', 'model', 'outcome'],
      registers,
    });
    this.settledAmount = new Counter({
      name: 'x402_settled_amount_atomic_total',
      help: 'USDC settled, in atomic units (6 decimals: 1000000 = 1 USDC)',
      labelNames: ['network', 'scheme', 'model'],
      registers,
    });
    this.verifyLatency = new Histogram({
      name: 'x402_payment_verify_duration_seconds',
      help: 'Time the facilitator took to verify a payment, by outcome (valid, invalid, error)',
      labelNames: ['network', 'scheme', 'outcome'],
      buckets: FACILITATOR_BUCKETS,
      registers,
    });
    this.settleLatency = new Histogram({
      name: 'x402_payment_settle_duration_seconds',
      help: 'Time the facilitator took to settle a payment, by outcome (settled, failed, pending, unavailable)',
      labelNames: ['network', 'scheme', 'outcome'],
      buckets: FACILITATOR_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'x402_reconciler_backlog',
      help: `Payments in state pending: settlements in flight or of unknown outcome, left to the reconciler (counted up to ${BACKLOG_CAP})`,
      registers,
      async collect() {
        // the ledger's database unavailable (a restart): the last count stays, and the rest of /metrics still answers
        const count = await pendingCount().catch(() => undefined);
        if (count !== undefined) this.set(count);
      },
    });
  }

  async verify(labels: PaymentLabels, verification: Promise<VerifyResult>): Promise<VerifyResult> {
    const started = performance.now();
    let outcome = 'error';
    try {
      const result = await verification;
      outcome = result.isValid ? 'valid' : 'invalid';
      return result;
    } finally {
      this.verifyLatency.observe({ network: labels.network, scheme: labels.scheme, outcome }, (performance.now() - started) / 1000);
      this.payments.inc({ ...labels, outcome: outcome === 'valid' ? 'verified' : outcome === 'invalid' ? 'invalid' : 'verify_error' });
    }
  }

  async settle(labels: PaymentLabels, amount: bigint, settlement: Promise<SettleOutcome>): Promise<SettleOutcome> {
    const started = performance.now();
    let outcome: SettleOutcome['status'] | 'pending' = 'pending'; // a throw leaves the outcome unknown
    try {
      const result = await settlement;
      outcome = result.status === 'unknown' ? 'pending' : result.status;
      return result;
    } finally {
      this.settleLatency.observe({ network: labels.network, scheme: labels.scheme, outcome }, (performance.now() - started) / 1000);
      this.count(labels, amount, outcome);
    }
  }

  reconciled(labels: PaymentLabels, amount: bigint | string, outcome: 'settled' | 'failed'): void {
    this.count(labels, amount, outcome);
  }

  private count(labels: PaymentLabels, amount: bigint | string, outcome: string): void {
    this.payments.inc({ ...labels, outcome });
    // Counters hold doubles: atomic amounts stay exact up to 2^53 (9 billion USDC) in total.
    if (outcome === 'settled') this.settledAmount.inc(labels, Number(BigInt(amount)));
  }
}
