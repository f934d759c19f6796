// Deletes media older than the retention period: once at startup, then on a timer (hourly by default).
// A prune that fails is logged and tried again at the next tick; ticks never overlap.
import type { Logger } from 'pino';
import type { MediaStore } from './media-store.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface MediaRetention {
  /** prunes now (waits for a prune already running instead of starting another); returns how many were deleted */
  pruneNow(): Promise<number>;
  /** stops the timer and waits for a running prune */
  stop(): Promise<void>;
}

export function startMediaRetention(
  store: MediaStore,
  days: number,
  log: Pick<Logger, 'info' | 'warn' | 'debug'>,
  options: { intervalMs?: number; now?: () => Date } = {},
): MediaRetention {
  const intervalMs = options.intervalMs ?? 60 * 60 * 1000;
  const now = options.now ?? (() => new Date());
  let running: Promise<number> | undefined;
  let stopped = false;

  const pruneNow = (): Promise<number> => {
    if (days <= 0) return Promise.resolve(0);
    running ??= (async () => {
      const cutoff = new Date(now().getTime() - days * DAY_MS);
      try {
        const pruned = await store.pruneOlderThan(cutoff);
        if (pruned > 0) log.info({ pruned, cutoff: cutoff.toISOString() }, 'media past retention deleted');
        else log.debug({ cutoff: cutoff.toISOString() }, 'no media past retention');
        return pruned;
      } catch (error) {
        log.warn({ err: error }, 'media retention prune failed; will retry at the next tick');
        return 0;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  if (days <= 0) {
    log.info('media retention disabled (mediaRetentionDays = 0): media is kept forever');
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
