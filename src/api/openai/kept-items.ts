// What this instance's Responses answers leave behind, kept a while by id, for a client referring back to them:
// - each output item by its id, for an `item_reference` input item (what the AI SDK's OpenAI provider sends for an
//   earlier answer's text, its `store` being true by default);
// - each answer's conversation (the input items it answered, an earlier conversation's first, then its output) by
//   the response's id, for `previous_response_id` (the openai SDK's way to go on with a conversation).
// Only for answers asked with `store` not false, each kept with its payer: a call naming one may be paid for by that
// payer alone (PreparedCall.payer), so an id that leaks opens nothing to anyone else. An id carries 96 random bits.
// Bounded by age and by size, oldest out first; another instance, or a restart, does not know them (the 400 says to
// send the conversation itself).
import type { OutputItem, ResponsesInputItem } from './responses-schemas.ts';

export const KEPT_MS = 60 * 60 * 1000;
const KEPT_CHARS = 16 * 1024 * 1024;

/** Values by id, each until it is `ttlMs` old, at most `maxChars` of JSON in all (an item shared by values counts in each). */
export class KeptById<T> {
  readonly #values = new Map<string, { value: T; chars: number; until: number }>();
  readonly #ttlMs: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(ttlMs = KEPT_MS, maxChars = KEPT_CHARS) {
    this.#ttlMs = ttlMs;
    this.#maxChars = maxChars;
  }

  keep(id: string, value: T, now = Date.now()): void {
    const chars = JSON.stringify(value).length;
    if (chars <= this.#maxChars) {
      this.#drop(id);
      this.#values.set(id, { value, chars, until: now + this.#ttlMs });
      this.#chars += chars;
    }
    // a Map iterates in insertion order: the oldest first
    for (const [id, kept] of this.#values) {
      if (kept.until > now && this.#chars <= this.#maxChars) break;
      this.#drop(id);
    }
  }

  get(id: string, now = Date.now()): T | undefined {
    const kept = this.#values.get(id);
    return kept && kept.until > now ? kept.value : undefined;
  }

  #drop(id: string): void {
    const kept = this.#values.get(id);
    if (!kept) return;
    this.#chars -= kept.chars;
    this.#values.delete(id);
  }
}

/** What an answer left, with who paid for it. */
export interface PaidFor<T> {
  value: T;
  payer: string;
}

/** this process's output items, by item id */
export const keptItems = new KeptById<PaidFor<OutputItem>>();
/** this process's conversations, by the id of the response that ended them */
export const keptConversations = new KeptById<PaidFor<readonly ResponsesInputItem[]>>();
