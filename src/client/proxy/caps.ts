// The spending caps: per call, in all, per rolling hour and per rolling day, in USDC atomic units. A payment is
// signed only if its ceiling fits every cap; past one, the refusal names the cap, what was spent under it and
// when its window reopens.
import { formatUsdc } from '../usdc.ts';
import type { SpendState } from './spend-state.ts';

export interface Caps {
  perCall?: bigint;
  total?: bigint;
  perHour?: bigint;
  perDay?: bigint;
}

export type CapName = 'max-per-call' | 'max-total' | 'max-per-hour' | 'max-per-day';

/** Why a payment was not signed: the cap, its limit, what is spent under it, and when it reopens (if ever). */
export interface CapRefusal {
  cap: CapName;
  limit: bigint;
  /** spent under the cap (held ceilings included) */
  spent: bigint;
  /** what this call would have signed */
  ceiling: bigint;
  /** epoch ms when the call would fit again; undefined: never (max-total, or a call above the cap by itself) */
  reopensAt?: number;
  /** money sitting in payment channels that counts against max-total (returned by a refund) */
  escrowed?: bigint;
}

/**
 * The first cap that a payment of `ceiling` would break, or undefined. `outOfWallet`: the payment moves money out of
 * the wallet now (exact, upto, a deposit), so max-total counts what sits in channel escrow too: the chain never
 * shows the buyer down by more than max-total.
 */
export function capRefusal(caps: Caps, state: SpendState, ceiling: bigint, now: number, outOfWallet: boolean): CapRefusal | undefined {
  if (caps.perCall !== undefined && ceiling > caps.perCall) return { cap: 'max-per-call', limit: caps.perCall, spent: 0n, ceiling };
  if (caps.total !== undefined) {
    if (state.total + ceiling > caps.total) return { cap: 'max-total', limit: caps.total, spent: state.total, ceiling };
    if (outOfWallet && state.walletDrop + ceiling > caps.total) {
      return { cap: 'max-total', limit: caps.total, spent: state.total, ceiling, escrowed: state.unspentEscrow };
    }
  }
  for (const [cap, limit, window] of [
    ['max-per-hour', caps.perHour, state.hour],
    ['max-per-day', caps.perDay, state.day],
  ] as const) {
    if (limit === undefined) continue;
    const spent = state.windowSum(window, now);
    if (spent + ceiling <= limit) continue;
    return { cap, limit, spent, ceiling, ...reopening(state, window, now, limit, ceiling) };
  }
  return undefined;
}

/** When enough of the window's oldest spends have aged out for `ceiling` to fit. */
function reopening(state: SpendState, window: SpendState['hour'], now: number, limit: bigint, ceiling: bigint): { reopensAt?: number } {
  if (ceiling > limit) return {};
  let remaining = state.windowSum(window, now);
  for (const spend of state.inWindow(window, now)) {
    remaining -= spend.amount;
    if (remaining + ceiling <= limit) return { reopensAt: spend.at + window.width };
  }
  return {};
}

/** What is left under each cap (undefined: no such cap). */
export function capsLeft(caps: Caps, state: SpendState, now: number): Record<'total' | 'perHour' | 'perDay', bigint | undefined> {
  const left = (limit: bigint | undefined, spent: bigint) => (limit === undefined ? undefined : limit > spent ? limit - spent : 0n);
  return {
    total: left(caps.total, state.total),
    perHour: left(caps.perHour, state.windowSum(state.hour, now)),
    perDay: left(caps.perDay, state.windowSum(state.day, now)),
  };
}

/**
 * The largest deposit into a payment channel the caps allow now: what max-total leaves of the wallet once every
 * payment and everything in escrow is counted (undefined: no max-total). The windows bound spending, not deposits.
 */
export function depositRoom(caps: Caps, state: SpendState): bigint | undefined {
  if (caps.total === undefined) return undefined;
  return caps.total > state.walletDrop ? caps.total - state.walletDrop : 0n;
}

const WINDOW_NAMES: Record<CapName, string> = {
  'max-per-call': 'per call',
  'max-total': 'in all',
  'max-per-hour': 'in the last hour',
  'max-per-day': 'in the last 24 hours',
};

/** The refusal as a person reads it: the cap, what was spent, what this call needed, and when it reopens. */
export function capMessage(refusal: CapRefusal, now: number): string {
  const usdc = (amount: bigint) => `${formatUsdc(amount)} USDC`;
  const head = `x402-ai proxy: spending cap reached (--${refusal.cap} ${usdc(refusal.limit)}); nothing was signed.`;
  if (refusal.cap === 'max-per-call') {
    return `${head} This call may cost up to ${usdc(refusal.ceiling)}, above the per-call cap: ask for fewer tokens (max_tokens) or raise --max-per-call.`;
  }
  const spent = `Spent ${usdc(refusal.spent)} ${WINDOW_NAMES[refusal.cap]}${refusal.escrowed ? ` and ${usdc(refusal.escrowed)} is held in a payment channel (x402-ai proxy --refund returns it)` : ''}; this call may cost up to ${usdc(refusal.ceiling)}.`;
  if (refusal.reopensAt !== undefined) {
    const minutes = Math.max(1, Math.ceil((refusal.reopensAt - now) / 60_000));
    return `${head} ${spent} The window reopens at ${new Date(refusal.reopensAt).toISOString()} (in ${minutes} min).`;
  }
  if (refusal.cap === 'max-total') return `${head} ${spent} The total cap does not reopen: raise --max-total to go on.`;
  return `${head} ${spent} This call alone is above the cap: raise --${refusal.cap}.`;
}
