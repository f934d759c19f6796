// Whole answers written together at the end of the event loop's turn, not each the moment it is ready.
// A client that waits for its answer sleeps, and the write that wakes it pays for the wake-up: on one machine (a
// load tool, an agent's paying proxy, a sidecar), a profile of the unpaid 402 at 50 connections had 16% of the
// gateway's CPU in the kernel waking the reader, once per answer. Written back to back after the turn's last
// call, the answers of all the requests read in that turn wake their client once. An answer waits only for the
// rest of its own turn: the calls that arrived with it, which were run before the next read anyway; at one call
// in flight the turn holds that call alone. (This is uWebSockets' corking, at the grain of a whole answer.)
// bench/unpaid-402.ts measures it (docs/performance.md): the unpaid 402, a new body each call, 79-91 us of server
// CPU per answer before, 54-62 us after, in the same runs.

/** A write of a whole answer, and what to do if it throws (its response is unusable: destroy it). */
interface QueuedWrite {
  write(): void;
  failed(error: unknown): void;
}

export class TurnWrites {
  #queued: QueuedWrite[] = [];

  /** `write` runs at the end of this turn (setImmediate), after every write queued before it. */
  queue(write: () => void, failed: (error: unknown) => void): void {
    if (this.#queued.push({ write, failed }) === 1) setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    const queued = this.#queued;
    this.#queued = [];
    for (const { write, failed } of queued) {
      try {
        write();
      } catch (error) {
        failed(error);
      }
    }
  };
}
