// The unpaid 402s the paid lane gave, kept to give again. What an unpaid call's 402 says depends only on its route, the
// origin it was made to, its X-Network, its body's bytes, and which networks can be paid now (the gate's offerState:
// readiness can withdraw one); a replay needs all of them equal, so it is the answer the call would have had. Only
// the values a 402 makes fresh each time (the sign-in nonce and times) are made again.
// Kept: only a question asked again while still among the last SEEN questions (a 32-bit hash of each, in a ring):
// a client with prompts of its own asks each once, and keeping every answer would hold thousands of dead answers a
// second long enough for V8 to move them to its old generation (measured: ~13 us more per answer than keeping
// none). Small bodies only, and the KEPT latest answers, the oldest dropped first. A question is hashed only when
// it has to be: to look it up while answers are kept, or once its answer is a 402; a call answered otherwise (a
// paid one is never asked) costs no hashing.
import type { PaymentAnswer } from './payment-edge.ts';

/** A body larger than this is answered the long way each time (an agent's probe is a few hundred bytes). */
const MAX_BODY_BYTES = 4096;
const KEPT = 256;
const SEEN = 256;

/** An unpaid call's question: everything its 402 depends on. */
export interface UnpaidAsk {
  offers: string;
  origin: string;
  route: string;
  network: string | undefined;
  body: Buffer;
  /** a 32-bit hash of all of the above, made on first use (hashOf) */
  hash?: number;
}

interface Kept {
  ask: UnpaidAsk;
  answer: PaymentAnswer;
}

export class UnpaidQuotes {
  private readonly kept = new Map<number, Kept>();
  private readonly seen = new Int32Array(SEEN);
  private nextSeen = 0;
  private readonly offerState: (network: string | undefined) => string;

  constructor(offerState: (network: string | undefined) => string) {
    this.offerState = offerState;
  }

  /** The question of an unpaid call to `route` at `origin`; undefined when its body is too large to keep. */
  ask(origin: string, route: string, network: string | undefined, body: Buffer): UnpaidAsk | undefined {
    if (body.byteLength > MAX_BODY_BYTES) return undefined;
    return { offers: this.offerState(network), origin, route, network, body };
  }

  /** The 402 kept for `ask`, with its fresh values made anew. */
  answer(ask: UnpaidAsk): PaymentAnswer | undefined {
    if (this.kept.size === 0) return undefined;
    const kept = this.kept.get(hashOf(ask));
    if (!kept || !sameAsk(kept.ask, ask)) return undefined;
    const { answer } = kept;
    return answer.fresh ? { ...answer, headers: { ...answer.headers, ...answer.fresh() } } : answer;
  }

  /** Keeps the 402 an unpaid call got if it was asked lately, unless the networks that can be paid changed meanwhile. */
  keep(ask: UnpaidAsk, answer: PaymentAnswer): void {
    if (answer.status !== 402) return;
    const hash = hashOf(ask);
    if (!this.seen.includes(hash)) {
      this.seen[this.nextSeen] = hash;
      this.nextSeen = (this.nextSeen + 1) % SEEN;
      return;
    }
    if (this.offerState(ask.network) !== ask.offers) return;
    if (this.kept.size >= KEPT && !this.kept.has(hash)) this.kept.delete(this.kept.keys().next().value!);
    // the body is copied: the request's buffer may be a slice of a larger one
    this.kept.set(hash, { ask: { ...ask, body: Buffer.from(ask.body) }, answer });
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the question's parts, each closed by a line break, then its body's bytes; kept on the question. */
function hashOf(ask: UnpaidAsk): number {
  if (ask.hash !== undefined) return ask.hash;
  let hash = hashText(hashText(hashText(hashText(FNV_OFFSET, ask.offers), ask.origin), ask.route), ask.network ?? '\n');
  for (let i = 0; i < ask.body.length; i++) hash = Math.imul(hash ^ ask.body[i]!, FNV_PRIME);
  return (ask.hash = hash | 0);
}

/** FNV-1a over a text's characters, then a line break (no part can hold one, so parts cannot run into each other). */
function hashText(hash: number, text: string): number {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return Math.imul(hash ^ 10, FNV_PRIME);
}

function sameAsk(a: UnpaidAsk, b: UnpaidAsk): boolean {
  return a.offers === b.offers && a.origin === b.origin && a.route === b.route && a.network === b.network && a.body.equals(b.body);
}
