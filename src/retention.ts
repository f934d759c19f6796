// Deletes what is older than a retention period: once at startup, then on a timer (hourly by default).
// A prune that fails is logged and tried again at the next tick; ticks never overlap. Used for media
// (media/media-retention.ts) and for final ledger rows (store/ledger-retention.ts).
import type { Logger } from 'pino';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Retention {
  /** prunes now (waits for a prune already running instead of starting another); returns how many were deleted */
  pruneNow(): Promise<number>;
  /** stops the timer and waits for a running prune */
  stop(): Promise<void>;
}

export interface RetentionOptions {
  intervalMs?: number;
  now?: () => Date;
}

export interface RetentionJob {
  /** what is pruned, for the logs ("media", "ledger rows") */
  what: string;
  /** the config setting, named in the log when it is 0 */
  setting: string;
  days: number;
  /** deletes everything older than the cutoff; returns how many went */
  prune: (cutoff: Date) => Promise<number>;
}

export function startRetention(
  job: RetentionJob,
  log: Pick<Logger, 'info' | 'warn' | 'debug'>,
  options: RetentionOptions = {},
): Retention {
  const { what, days } = job;
  const intervalMs = options.intervalMs ?? 60 * 60 * 1000;
  const now = options.now ?? (() => new Date());
  let running: Promise<number> | undefined;
  let stopped = false;

  const pruneNow = (): Promise<number> => {
    if (days <= 0) return Promise.resolve(0);
    running ??= (async () => {
      const cutoff = new Date(now().getTime() - days * DAY_MS);
      try {
        const pruned = await job.prune(cutoff);
        if (pruned > 0) log.info({ pruned, cutoff: cutoff.toISOString() }, `${what} past retention deleted`);
        else log.debug({ cutoff: cutoff.toISOString() }, `no ${what} past retention`);
        return pruned;
      } catch (error) {
        log.warn({ err: error }, `${what} retention prune failed; will retry at the next tick`);
        return 0;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  if (days <= 0) {
    log.info(`${what} retention disabled (${job.setting} = 0): kept forever`);
    return { pruneNow, stop: async () => undefined };
  }
  void pruneNow();
  const timer = setInterval(() => {
    if (!stopped) void pruneNow();
  }, intervalMs);
  timer.unref();
  return {
    pruneNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
