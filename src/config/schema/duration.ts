// Durations in milliseconds go to setTimeout and setInterval, which take at most 2^31-1 ms (about 24.8 days): a
// longer one fires after 1 ms instead, and an interval then every millisecond (Node's TimeoutOverflowWarning).
import { z } from 'zod';

export const MAX_TIMER_MS = 2_147_483_647;

/** a whole number of milliseconds from `least` to MAX_TIMER_MS */
export const milliseconds = (least = 1) =>
  z.number().int().min(least).max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days): a longer timer would fire every millisecond`);
