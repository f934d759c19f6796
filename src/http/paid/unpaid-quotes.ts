// The unpaid 402s the paid lane gave, kept to give again. The unpaid 402 is the most frequent answer (every agent asks
// a route's terms before paying), and most of its cost is reaching it: parsing and validating the body, pricing it,
// building the gate's call. What an unpaid call's 402 says depends only on its route, the origin it was made to, its
// X-Network, its body's bytes, and which networks can be paid now (the gate's offerState: readiness can withdraw
// one); those make the key, so a replay is the answer the call would have had. Only the values a 402 makes fresh
// each time (the sign-in nonce and times) are made again. Small bodies only, and a bounded number of them: the oldest
// kept is dropped first.
import type { PaymentAnswer } from './payment-edge.ts';

/** A body larger than this is answered the long way each time (an agent's probe is a few hundred bytes). */
const MAX_BODY_BYTES = 4096;
const MAX_KEPT = 256;

/** What an unpaid call asked, as the key of its kept 402. */
export interface UnpaidAsk {
  key: string;
  offers: string;
  network: string | undefined;
}

export class UnpaidQuotes {
  private readonly kept = new Map<string, PaymentAnswer>();
  private readonly offerState: (network: string | undefined) => string;

  constructor(offerState: (network: string | undefined) => string) {
    this.offerState = offerState;
  }

  /** The key of an unpaid call to `route` at `origin`; undefined when its body is too large to keep. */
  ask(origin: string, route: string, network: string | undefined, body: Buffer): UnpaidAsk | undefined {
    if (body.byteLength > MAX_BODY_BYTES) return undefined;
    const offers = this.offerState(network);
    // none of the parts before the body can hold a line break (header values and a route path cannot)
    return { key: `${offers}\n${origin}${route}\n${network ?? ''}\n${body.toString('latin1')}`, offers, network };
  }

  /** The 402 kept for `ask`, with its fresh values made anew. */
  answer(ask: UnpaidAsk): PaymentAnswer | undefined {
    const kept = this.kept.get(ask.key);
    if (!kept?.fresh) return kept;
    return { ...kept, headers: { ...kept.headers, ...kept.fresh() } };
  }

  /** Keeps the 402 an unpaid call got, unless the networks that can be paid changed while it was answered. */
  keep(ask: UnpaidAsk, answer: PaymentAnswer): void {
    if (answer.status !== 402 || this.offerState(ask.network) !== ask.offers) return;
    if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(ask.key, answer);
  }
}
