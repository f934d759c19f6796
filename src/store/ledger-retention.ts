// Deletes ledger rows in a final state (settled, failed, released) whose last change is older than
// ledgerRetentionDays, payment identifiers bound before then, and payment channels' charges made before then
// (their kept results; the channel rows themselves stay, they are live state): at startup, then hourly (src/retention.ts), in
// every instance. Instances pruning at once are safe: each DELETE is guarded by state and age, so a row is deleted
// once and an in-flight row never. A pruned settled payment cannot be paid again: its proof is spent on-chain (EVM
// nonce, Solana signature), so verification refuses it; only its replay (the stored result) and its receipt lookup
// are gone. A pruned payment identifier guards nothing the payment's key does not: the id may then come with a
// new payment, which is checked as any payment is.
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
  const inBatches = async (deleteBatch: (limit: number) => Promise<number>): Promise<number> => {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch(BATCH);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  };
  const channels = ledger.channels;
  const prune = async (cutoff: Date): Promise<number> =>
    (await inBatches((limit) => ledger.pruneFinal(cutoff, limit))) +
    (await inBatches((limit) => ledger.prunePaymentIds(cutoff, limit))) +
    (channels ? await inBatches((limit) => channels.pruneCharges(cutoff, limit)) : 0);
  return startRetention({ what: 'ledger rows', setting: 'ledgerRetentionDays', days, prune }, log, options);
}
