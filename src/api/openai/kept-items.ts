// The output items of this instance's Responses answers, kept a while by id, so that a client referring back to one
// (an `item_reference` input item: what the AI SDK's OpenAI provider sends for an earlier answer's text, its `store`
// being true by default) has it resolved. Nothing else is kept: no conversations, no responses by id. An item id
// carries 96 random bits: only whoever got the answer can name it. Bounded by age and by size, oldest out first;
// another instance, or a restart, does not know them (the 400 says to send the item itself).
import type { OutputItem } from './responses-schemas.ts';

export const KEPT_ITEM_MS = 60 * 60 * 1000;
const KEPT_CHARS = 16 * 1024 * 1024;

export class KeptItems {
  readonly #items = new Map<string, { item: OutputItem; chars: number; until: number }>();
  readonly #ttlMs: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(ttlMs = KEPT_ITEM_MS, maxChars = KEPT_CHARS) {
    this.#ttlMs = ttlMs;
    this.#maxChars = maxChars;
  }

  keep(items: readonly OutputItem[], now = Date.now()): void {
    for (const item of items) {
      const chars = JSON.stringify(item).length;
      if (chars > this.#maxChars) continue;
      this.#drop(item.id);
      this.#items.set(item.id, { item, chars, until: now + this.#ttlMs });
      this.#chars += chars;
    }
    // a Map iterates in insertion order: the oldest first
    for (const [id, kept] of this.#items) {
      if (kept.until > now && this.#chars <= this.#maxChars) break;
      this.#drop(id);
    }
  }

  get(id: string, now = Date.now()): OutputItem | undefined {
    const kept = this.#items.get(id);
    return kept && kept.until > now ? kept.item : undefined;
  }

  #drop(id: string): void {
    const kept = this.#items.get(id);
    if (!kept) return;
    this.#chars -= kept.chars;
    this.#items.delete(id);
  }
}

/** this process's items */
export const keptItems = new KeptItems();
