// Deletes ledger rows in a final state (settled, failed, released) whose last change is older than
// ledgerRetentionDays: at startup, then hourly (src/retention.ts), in every instance. Instances pruning at once
// are safe: each DELETE is guarded by state and age, so a row is deleted once and an in-flight row never.
// A pruned settled payment cannot be paid again: its proof is spent on-chain (EVM nonce, Solana signature),
// so verification refuses it; only its replay (the stored result) and its receipt lookup are gone.
import type { Logger } from 'pino';
import type { Ledger } from './ledger.ts';
import { startRetention, type Retention, type RetentionOptions } from '../retention.ts';

/** rows per DELETE, so one prune never holds locks on a large table for long */
const BATCH = 1_000;

export function startLedgerRetention(
  ledger: Ledger,
  days: number,
  log: Pick<Logger, 'info' | 'warn' | 'debug'>,
  options: RetentionOptions = {},
): Retention {
  const prune = async (cutoff: Date): Promise<number> => {
    let total = 0;
    for (;;) {
      const deleted = await ledger.pruneFinal(cutoff, BATCH);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  };
  return startRetention({ what: 'ledger rows', setting: 'ledgerRetentionDays', days, prune }, log, options);
}
