// Settles the fate of payments whose settlement outcome was unknown (a timeout after broadcast, or a crash
// mid-settlement), settles those the gate deferred (a stream delivered while the chain or the ledger was out
// of reach), and frees reservations abandoned before settlement began. Runs at startup and on a timer,
// in every instance: each pending payment is claimed with a lease (Ledger.claimPending), so two instances
// sharing one database never check the same payment at once; every write is a guarded transition.
import type { Logger } from 'pino';
import type { Ledger, PaymentRecord } from '../store/ledger.ts';
import type { MediaStore } from '../media/media-store.ts';
import { proofFromStored, requirementFromStored, type PaymentProof, type PaymentRequirement } from '../x402/model.ts';
import { facilitatorFor, type PaymentRails } from './rails.ts';
import type { Facilitator, SettleOutcome } from './facilitator.ts';
import { SETTLEMENT_DEFERRED } from './reasons.ts';
import type { NetworkName } from '../x402/networks.ts';
import { NO_PAYMENT_OBSERVER, paymentLabels, type PaymentObserver } from './payment-metrics.ts';

export interface ReconcilerOptions {
  /** a reservation this old that never reached settlement belongs to a request that died; default 10 min */
  abandonedAfterMs?: number;
  /**
   * how long a claimed pending payment stays this instance's (checks running longer are abandoned); also how
   * long a payment waits when its instance died mid-check. Default 5 s.
   */
  leaseMs?: number;
  /** pending payments updated more recently than this are left to the request settling them; default 0 */
  settlingGraceMs?: number;
}

const BATCH = 100;

export class Reconciler {
  private readonly deps: { ledger: Ledger; rails: PaymentRails; media: MediaStore; log: Logger; observe?: PaymentObserver };
  private readonly options: Required<ReconcilerOptions>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(deps: { ledger: Ledger; rails: PaymentRails; media: MediaStore; log: Logger; observe?: PaymentObserver }, options: ReconcilerOptions = {}) {
    this.deps = deps;
    this.options = {
      abandonedAfterMs: options.abandonedAfterMs ?? 10 * 60_000,
      leaseMs: options.leaseMs ?? 5_000,
      settlingGraceMs: options.settlingGraceMs ?? 0,
    };
  }

  start(intervalMs: number): void {
    void this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; concurrent calls share the pass in flight. */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    const { ledger, log } = this.deps;
    try {
      const { leaseMs, settlingGraceMs, abandonedAfterMs } = this.options;
      // The claimed rows are ours until the lease runs out; a check still running near its end is abandoned (its
      // outcome unused), so no two instances act on one payment at once. What is left is claimed again later.
      const claimedAt = Date.now();
      const deadline = claimedAt + leaseMs - Math.min(1_000, leaseMs / 5);
      for (const payment of await ledger.claimPending(BATCH, leaseMs, settlingGraceMs)) {
        if (Date.now() >= deadline) break;
        log.info({ key: payment.key, tx: payment.txHash }, 'reconciling pending payment');
        await this.reconcile(payment, deadline);
      }
      const cutoff = new Date(Date.now() - abandonedAfterMs);
      for (const payment of await ledger.listStale(cutoff, BATCH)) {
        // Nothing was broadcast for these (settlement starts only in 'pending'), so the proof is still good.
        // The guarded release lets exactly one instance release each, and never one a live holder took over since.
        if (await ledger.releaseStale(payment.key, cutoff, 'abandoned before settlement')) {
          log.warn({ key: payment.key, state: payment.state }, 'abandoned reservation released');
        }
      }
    } catch (error) {
      log.error({ err: error }, 'reconciliation pass failed');
    }
  }

  private async reconcile(payment: PaymentRecord, deadline: number): Promise<void> {
    const { ledger, log, media } = this.deps;
    const observe = this.deps.observe ?? NO_PAYMENT_OBSERVER;
    const rail = this.deps.rails.get(payment.network as NetworkName);
    const proof = proofFromStored(payment.payload);
    const requirement = requirementFromStored(payment.requirements);
    if (!rail || !proof || !requirement) return;
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        log.warn({ key: payment.key }, 'settlement check outlived its lease; will retry');
        resolve(undefined);
      }, Math.max(0, deadline - Date.now()));
    });
    const facilitator = facilitatorFor(rail, proof.scheme);
    if (!facilitator) return;
    const check = (isDeferred(payment) ? this.settleDeferred(payment, facilitator, proof, requirement) : facilitator.checkSettlement(proof, requirement, payment.txHash ?? ''))
      .catch((error: unknown) => {
        log.warn({ err: error, key: payment.key }, 'settlement check failed; will retry');
        return undefined;
      });
    const outcome = await Promise.race([check, outOfTime]).finally(() => clearTimeout(timer));
    // still out of reach: a deferred settlement is tried again at the next pass
    if (!outcome || outcome.status === 'unavailable') return;
    if (outcome.status === 'unknown') {
      // settled anew (our first transaction was lost): the next check follows the new transaction
      if (outcome.transaction && outcome.transaction !== payment.txHash) {
        await ledger.transition(payment.key, ['pending'], { state: 'pending', txHash: outcome.transaction, error: outcome.reason });
      }
      return;
    }
    if (outcome.status === 'settled') {
      if (await ledger.transition(payment.key, ['pending'], { state: 'settled', txHash: outcome.transaction || payment.txHash })) {
        log.info({ key: payment.key, tx: outcome.transaction }, 'pending payment reconciled: settled');
        observe.reconciled(paymentLabels(payment), payment.amount, 'settled');
      }
      return;
    }
    if (await ledger.transition(payment.key, ['pending'], { state: 'failed', error: outcome.reason, result: null })) {
      observe.reconciled(paymentLabels(payment), payment.amount, 'failed');
      await Promise.all((payment.result?.media ?? []).map((id) => media.delete(id).catch(() => undefined)));
      log.warn({ key: payment.key, reason: outcome.reason }, 'pending payment reconciled: failed; result withheld');
    }
  }

  /**
   * Settles a payment the gate deferred (its stream was delivered while the chain or the ledger was unreachable:
   * nothing was sent). One settlement per payment at a time in this process; a refusal is believed only once
   * the chain confirms it (the authorization expired), since it may mean that an earlier attempt landed after
   * all (the token lets one transfer per authorization through, so two attempts never charge twice).
   */
  private async settleDeferred(payment: PaymentRecord, facilitator: Facilitator, proof: PaymentProof, requirement: PaymentRequirement): Promise<SettleOutcome> {
    if (this.settling.has(payment.key)) return { status: 'unavailable', reason: 'settling' };
    this.settling.add(payment.key);
    try {
      const amount = BigInt(payment.settledAmount ?? payment.amount);
      const settled = await facilitator.settle(proof, requirement, amount);
      if (settled.status !== 'failed') return settled;
      const checked = await facilitator.checkSettlement(proof, requirement, settled.transaction ?? '');
      // not used and not expired: the settlement is tried again at the next pass
      return checked.status === 'unknown' ? { status: 'unavailable', reason: settled.reason } : checked;
    } finally {
      this.settling.delete(payment.key);
    }
  }

  /** deferred payments this process is settling (see settleDeferred) */
  private readonly settling = new Set<string>();
}

/** A payment whose settlement the gate deferred: nothing was sent for it (see PaymentGate.deferSettlement). */
function isDeferred(payment: PaymentRecord): boolean {
  return payment.txHash === null && payment.error?.startsWith(SETTLEMENT_DEFERRED) === true;
}
