// Deletes media older than the retention period (mediaRetentionDays): at startup, then hourly (src/retention.ts).
import type { Logger } from 'pino';
import type { MediaStore } from './media-store.ts';
import { startRetention, type Retention, type RetentionOptions } from '../retention.ts';

export type MediaRetention = Retention;

export function startMediaRetention(
  store: MediaStore,
  days: number,
  log: Pick<Logger, 'info' | 'warn' | 'debug'>,
  options: RetentionOptions = {},
): MediaRetention {
  return startRetention({ what: 'media', setting: 'mediaRetentionDays', days, prune: (cutoff) => store.pruneOlderThan(cutoff) }, log, options);
}
