// A fetch whose network failures say what could not be reached and why. The platform's fetch rejects with a
// bare "fetch failed" whose reason hides in `cause` (a refused connection, an unknown host...): a buyer needs
// the URL and that reason to fix a typo in --url or start the gateway.
import { UnreachableError } from './errors.ts';

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is the gateway running there?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'no route to the host',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
};

/** The reason a fetch failed, from the error's cause chain (its code when it has a known one). */
export function failureReason(error: unknown): string {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && REASONS[code]) return REASONS[code];
    // happy eyeballs: one error per address tried, all alike
    if (cause instanceof AggregateError && cause.errors[0] instanceof Error) return failureReason(cause.errors[0]);
    if (!(cause.cause instanceof Error)) return cause.message;
  }
  return String(error);
}

/** Wraps a fetch so a failure to reach the server is an UnreachableError naming the URL; aborts pass through. */
export function explainingFetch(doFetch: typeof fetch): typeof fetch {
  return async (input, init) => {
    try {
      return await doFetch(input, init);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // AbortError, TimeoutError: the caller's own
      const url = input instanceof Request ? input.url : String(input);
      throw new UnreachableError(url, failureReason(error), error);
    }
  };
}
