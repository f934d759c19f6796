// Who hands out the account nonces of one settlement key. Every transaction a key sends needs the next
// nonce, and two transactions given the same one collide (one is refused or replaces the other), so the
// assignment, the signing and the send run as one ordered step per key:
//   - ProcessNonces: one process sends with the key (SQLite ledger, a single instance): an in-memory counter.
//   - SharedNonces (src/store/postgres-nonces.ts): instances sharing a PostgreSQL ledger and a key take
//     turns through a row lock on the key's counter in the ledger, so no two instances ever sign the same nonce.
// Both start from the chain's pending transaction count and go back to it when the node says a nonce is
// too low (someone else sent with the key, or a transaction was dropped).

/** What the ordered step did with the nonce it was given. */
export interface NonceUse<T> {
  /** a transaction carrying the nonce may reach a block: the next caller gets the next nonce */
  spent: boolean;
  /** the node refused the nonce as already used: run the step again once with the chain's count */
  stale?: boolean;
  value: T;
}

export interface NonceAllocator {
  /** Runs `use` with the key's next nonce; calls run one at a time in the order they came. */
  withNextNonce<T>(use: (nonce: number) => Promise<NonceUse<T>>): Promise<T>;
}

/** The chain's count of the key's transactions, mined and pending: the first nonce not yet used. */
export type PendingCount = () => Promise<number>;

/** Runs tasks one at a time, in call order; a failed task does not stop the ones after it. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * Runs `use` with `nonce`; when the node calls it stale, once more with the chain's count. Returns the
 * outcome and the nonce the counter should hold next.
 */
export async function useNonce<T>(nonce: number, use: (nonce: number) => Promise<NonceUse<T>>, pendingCount: PendingCount) {
  let outcome = await use(nonce);
  if (outcome.stale) {
    nonce = await pendingCount();
    outcome = await use(nonce);
  }
  return { value: outcome.value, next: outcome.spent ? nonce + 1 : outcome.stale ? undefined : nonce };
}

/** The nonces of a key only this process sends with. */
export class ProcessNonces implements NonceAllocator {
  readonly #queue = new SerialQueue();
  readonly #pendingCount: PendingCount;
  #next: number | undefined;

  constructor(pendingCount: PendingCount) {
    this.#pendingCount = pendingCount;
  }

  withNextNonce<T>(use: (nonce: number) => Promise<NonceUse<T>>): Promise<T> {
    return this.#queue.run(async () => {
      this.#next ??= await this.#pendingCount();
      try {
        const { value, next } = await useNonce(this.#next, use, this.#pendingCount);
        this.#next = next;
        return value;
      } catch (error) {
        this.#next = undefined; // unsure what happened: ask the chain next time
        throw error;
      }
    });
  }
}
