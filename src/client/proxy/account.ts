// The account a person reads: one line per paid call (model, tokens, charged, running total), and the spend file
// summed up (GET /stats, `x402-ai spend`): spent in atomic units and USDC, calls, per model, per scheme, payment
// channel escrow, what left the wallet, and what is left under each cap. Never a prompt, an answer or a key.
import { formatUsdc } from '../usdc.ts';
import { capsLeft, type Caps } from './caps.ts';
import type { SpendState } from './spend-state.ts';

const money = (atomic: bigint) => ({ atomic: atomic.toString(), usdc: formatUsdc(atomic) });

interface Tally {
  calls: number;
  atomic: bigint;
  promptTokens: number;
  completionTokens: number;
}

function tally(groups: Map<string, Tally>, key: string): Tally {
  let group = groups.get(key);
  if (!group) groups.set(key, (group = { calls: 0, atomic: 0n, promptTokens: 0, completionTokens: 0 }));
  return group;
}

const asJson = (groups: Map<string, Tally>) =>
  Object.fromEntries(
    [...groups].map(([key, group]) => [key, { calls: group.calls, ...money(group.atomic), promptTokens: group.promptTokens, completionTokens: group.completionTokens }]),
  );

/** The account as GET /stats answers it and `x402-ai spend --json` prints it. */
export function accountOf(state: SpendState, caps: Caps, now: number) {
  const perModel = new Map<string, Tally>();
  const perScheme = new Map<string, Tally>();
  let settled = 0;
  let pending = 0;
  for (const spend of state.spends.values()) {
    if (spend.settled) settled++;
    else pending++;
    for (const group of [tally(perModel, spend.model ?? (spend.settled ? 'unknown' : 'pending')), tally(perScheme, spend.scheme)]) {
      group.calls++;
      group.atomic += spend.amount;
      group.promptTokens += spend.promptTokens ?? 0;
      group.completionTokens += spend.completionTokens ?? 0;
    }
  }
  const left = capsLeft(caps, state, now);
  const cap = (limit: bigint | undefined, remaining?: bigint) =>
    limit === undefined ? null : { limit: money(limit), ...(remaining === undefined ? {} : { left: money(remaining) }) };
  return {
    spent: money(state.total),
    calls: settled,
    /** calls whose receipt has not come (their ceiling is counted) */
    pendingCalls: pending,
    perModel: asJson(perModel),
    perScheme: asJson(perScheme),
    lastHour: money(state.windowSum(state.hour, now)),
    lastDay: money(state.windowSum(state.day, now)),
    channels: { deposited: money(state.escrowIn), refunded: money(state.escrowOut), unspent: money(state.unspentEscrow) },
    /** what left the wallet: every payment but vouchers, and what sits in channels (the on-chain balance drop) */
    walletDrop: money(state.walletDrop),
    caps: { perCall: cap(caps.perCall), total: cap(caps.total, left.total), perHour: cap(caps.perHour, left.perHour), perDay: cap(caps.perDay, left.perDay) },
  };
}

export type Account = ReturnType<typeof accountOf>;

/** One paid call, for the terminal. */
export function callLine(call: { surface: string; model?: string; promptTokens?: number; completionTokens?: number; charged: bigint; scheme: string; total: bigint }): string {
  const time = new Date().toTimeString().slice(0, 8);
  const tokens = call.promptTokens !== undefined || call.completionTokens !== undefined ? `${call.promptTokens ?? '?'} in / ${call.completionTokens ?? '?'} out` : 'no tokens';
  return `${time}  ${call.surface}  ${call.model ?? '?'}  ${tokens}  charged ${formatUsdc(call.charged)} USDC (${SCHEME_WORDS[call.scheme] ?? call.scheme})  total ${formatUsdc(call.total)} USDC`;
}

const SCHEME_WORDS: Record<string, string> = { 'batch-settlement': 'voucher', upto: 'upto', exact: 'exact' };

/** The account for a person: `x402-ai spend` without --json. */
export function accountText(account: Account): string {
  const lines = [
    `spent ${account.spent.usdc} USDC (${account.spent.atomic} atomic) in ${account.calls} calls${account.pendingCalls ? `, ${account.pendingCalls} awaiting their receipt` : ''}`,
    `last hour ${account.lastHour.usdc} USDC, last 24 hours ${account.lastDay.usdc} USDC; out of the wallet ${account.walletDrop.usdc} USDC`,
    `payment channels: deposited ${account.channels.deposited.usdc}, refunded ${account.channels.refunded.usdc}, unspent ${account.channels.unspent.usdc} USDC`,
  ];
  for (const [model, group] of Object.entries(account.perModel)) lines.push(`  ${model}: ${group.calls} calls, ${group.usdc} USDC, ${group.promptTokens} in / ${group.completionTokens} out tokens`);
  for (const [scheme, group] of Object.entries(account.perScheme)) lines.push(`  by ${SCHEME_WORDS[scheme] ?? scheme}: ${group.calls} calls, ${group.usdc} USDC`);
  const caps = Object.entries(account.caps).filter(([, cap]) => cap !== null) as [string, { limit: { usdc: string }; left?: { usdc: string } }][];
  lines.push(
    caps.length === 0
      ? 'caps: none'
      : `caps: ${caps.map(([name, cap]) => `${CAP_FLAGS[name]} ${cap.limit.usdc}${cap.left ? ` (${cap.left.usdc} left)` : ''}`).join(', ')}`,
  );
  return lines.join('\n');
}

const CAP_FLAGS: Record<string, string> = { perCall: '--max-per-call', total: '--max-total', perHour: '--max-per-hour', perDay: '--max-per-day' };
