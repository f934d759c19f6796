// Keeps this instance's reservations held while it works on them: every quarter of the lease it extends the
// lease of each one (one statement). When the process dies the beats stop, and its reservations are free to be
// taken over within one lease (see Ledger.reserve and ReservationHolder).
import type { Logger } from 'pino';
import type { Ledger } from './ledger.ts';

export function startReservationHeartbeat(ledger: Ledger, leaseMs: number, log: Logger): { stop(): Promise<void> } {
  let beating: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    beating = ledger.heartbeat().catch((error: unknown) => {
      log.warn({ reason: error instanceof Error ? error.message : String(error) }, 'reservation heartbeat failed; will retry');
    });
  }, Math.max(250, Math.floor(leaseMs / 4)));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await beating;
    },
  };
}
