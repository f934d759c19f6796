// A streamed answer that must end by a deadline (a metered payment that expires: payments/stream-validity.ts)
// is stopped through its abort signal with this reason. Unlike a client that leaves, a stream stopped at its
// deadline is a delivered answer: it ends as if its token limit were reached, and what was sent is charged.

export class StreamDeadline extends Error {
  override name = 'StreamDeadline';
  constructor() {
    super('the stream reached the deadline its payment allows');
  }
}

/** A signal aborted with a StreamDeadline at `at` (ms since the epoch). */
export function streamDeadlineSignal(at: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new StreamDeadline()), Math.max(0, at - Date.now()));
  timer.unref();
  return controller.signal;
}

export function isStreamDeadline(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof StreamDeadline;
}
