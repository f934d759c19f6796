// A streamed answer is delivered as it is made, so it must not outlive the payment's ability to settle: a proof
// that expires mid-stream would give the whole answer for free (its settlement then fails on the expired
// authorization). The rule, per call, once the proof is verified:
//   - the proof stays valid for the stream's whole bound and the settlement after it: settle after the work,
//     as any call;
//   - `exact` otherwise (a short validBefore, or a proof whose expiry is not known here, such as a Solana
//     transaction's blockhash): settle first, before the first byte; a failed or abandoned stream is then
//     run again by the same proof at no charge (settle-first's rule);
//   - `upto` otherwise: the stream stops at the proof's expiry less the settlement margin, as if its token
//     limit were reached, and the tokens delivered by then are settled; a proof too short for even
//     MIN_UPTO_STREAM_SECONDS of answer is refused before any work.
import type { ProofIdentity } from './schemes/scheme.ts';

/** how long before the proof expires its settlement must have been sent (simulation, broadcast, inclusion) */
export const SETTLE_MARGIN_SECONDS = 15;

/** the least answer time a metered stream is started with */
export const MIN_UPTO_STREAM_SECONDS = 5;

export type StreamPlan =
  | { kind: 'as_usual' }
  | { kind: 'settle_first' }
  /** upto: the stream stops at `at` (ms since the epoch) */
  | { kind: 'deadline'; at: number }
  | { kind: 'refuse'; reason: string };

/**
 * How a call whose work may stream for up to `streamSeconds` is paid under `scheme` with a proof of this identity.
 * `streamSeconds` absent: nothing is delivered before the work resolves, so the usual path is safe.
 */
export function streamPlan(streamSeconds: number | undefined, scheme: string, identity: ProofIdentity, now = Date.now()): StreamPlan {
  if (streamSeconds === undefined) return { kind: 'as_usual' };
  const lastSettleAt = identity.validUntil === undefined ? undefined : identity.validUntil * 1000 - SETTLE_MARGIN_SECONDS * 1000;
  if (lastSettleAt !== undefined && lastSettleAt >= now + streamSeconds * 1000) return { kind: 'as_usual' };
  if (scheme !== 'upto') return { kind: 'settle_first' };
  if (lastSettleAt === undefined || lastSettleAt < now + MIN_UPTO_STREAM_SECONDS * 1000) {
    return {
      kind: 'refuse',
      reason: `payment_expires_too_soon: a streamed answer needs a payment valid for at least ${SETTLE_MARGIN_SECONDS + MIN_UPTO_STREAM_SECONDS} s more (it settles after the last token, at least ${SETTLE_MARGIN_SECONDS} s before the payment expires); sign one with a later deadline, or ask without stream`,
    };
  }
  return { kind: 'deadline', at: lastSettleAt };
}
