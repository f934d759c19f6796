// Settles the fate of payments whose settlement outcome was unknown (a timeout after broadcast, or a crash
// mid-settlement), and frees reservations abandoned before settlement began. Runs at startup and on a timer.
import type { Logger } from 'pino';
import type { Ledger, PaymentRecord } from '../store/ledger.ts';
import type { MediaStore } from '../media/media-store.ts';
import type { PaymentPayload, PaymentRequirements } from '../x402/types.ts';
import type { PaymentRails } from './rails.ts';
import type { NetworkName } from '../x402/networks.ts';

/** A reservation this old that never reached settlement belongs to a request that died. */
const ABANDONED_AFTER_MS = 10 * 60_000;

export class Reconciler {
  private readonly deps: { ledger: Ledger; rails: PaymentRails; media: MediaStore; log: Logger };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(deps: { ledger: Ledger; rails: PaymentRails; media: MediaStore; log: Logger }) {
    this.deps = deps;
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
      for (const payment of await ledger.listPending(100)) await this.reconcile(payment);
      for (const payment of await ledger.listStale(new Date(Date.now() - ABANDONED_AFTER_MS), 100)) {
        // Nothing was broadcast for these (settlement starts only in 'pending'), so the proof is still good.
        await ledger.transition(payment.key, ['reserved', 'verified'], { state: 'released', error: 'abandoned before settlement' });
      }
    } catch (error) {
      log.error({ err: error }, 'reconciliation pass failed');
    }
  }

  private async reconcile(payment: PaymentRecord): Promise<void> {
    const { ledger, log, media } = this.deps;
    const rail = this.deps.rails.get(payment.network as NetworkName);
    if (!rail) return;
    const outcome = await rail.facilitator
      .checkSettlement(payment.payload as PaymentPayload, payment.requirements as PaymentRequirements, payment.txHash ?? '')
      .catch((error: unknown) => {
        log.warn({ err: error, key: payment.key }, 'settlement check failed; will retry');
        return undefined;
      });
    if (!outcome || outcome.status === 'unknown') return;
    if (outcome.status === 'settled') {
      await ledger.transition(payment.key, ['pending'], { state: 'settled', txHash: outcome.transaction || payment.txHash });
      log.info({ key: payment.key, tx: outcome.transaction }, 'pending payment reconciled: settled');
      return;
    }
    if (await ledger.transition(payment.key, ['pending'], { state: 'failed', error: outcome.reason, result: null })) {
      await Promise.all((payment.result?.media ?? []).map((id) => media.delete(id).catch(() => undefined)));
      log.warn({ key: payment.key, reason: outcome.reason }, 'pending payment reconciled: failed; result withheld');
    }
  }
}
