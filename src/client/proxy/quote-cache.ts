// The gateway's 402 for a request body it priced before: the same route, network and bytes cost the same, so the
// proxy signs at once instead of asking again (one round trip less per call). Should the price have changed, the
// gateway refuses the payment with its new 402, nothing charged, and the proxy pays that.
import { createHash } from 'node:crypto';
import type { PaymentRequired } from '@x402/core/types';

const MAX_ENTRIES = 256;
const TTL_MS = 5 * 60_000;

export class QuoteCache {
  readonly #entries = new Map<string, { required: PaymentRequired; at: number }>();

  static key(path: string, network: string, body: Buffer): string {
    return createHash('sha256').update(path).update('\n').update(network).update('\n').update(body).digest('base64');
  }

  get(key: string, now: number): PaymentRequired | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at > TTL_MS) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.required;
  }

  set(key: string, required: PaymentRequired, now: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { required, at: now });
  }
}
