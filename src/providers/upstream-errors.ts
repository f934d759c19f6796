// Maps whatever a provider call threw onto the service's error type: the client learns whether to retry,
// and never sees upstream internals (URLs, keys, bodies).
import { APICallError } from '@ai-sdk/provider';
import type { RetryError } from 'ai';
import { ApiError } from '../errors.ts';

export function toUpstreamError(error: unknown, modelId: string): ApiError {
  if (error instanceof ApiError) return error;
  const cause = isRetryError(error) ? error.lastError : error;
  if (isTimeout(cause)) {
    return new ApiError(504, 'upstream_timeout', `model ${modelId} did not answer in time; nothing was charged`, { cause: error });
  }
  if (APICallError.isInstance(cause) && cause.statusCode !== undefined) {
    const status = cause.statusCode;
    if (status === 429 || status === 503) {
      return new ApiError(503, 'upstream_unavailable', `model ${modelId} is busy (upstream ${status}); nothing was charged, retry later`, {
        cause: error,
        headers: { 'Retry-After': '10' },
      });
    }
    if (status < 400) {
      // answered, but the body was cut off, not JSON, or not the expected shape
      return new ApiError(502, 'upstream_error', `model ${modelId} returned an unreadable response; nothing was charged`, { cause: error });
    }
    return new ApiError(502, 'upstream_error', `model ${modelId} failed (upstream ${status}); nothing was charged`, { cause: error });
  }
  return new ApiError(502, 'upstream_error', `model ${modelId} failed; nothing was charged`, { cause: error });
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

/** ai's RetryError (its retries gave up), told by its name, as ai itself names it: `ai` is imported only for a
 * generation (ai-sdk.ts), the one place a RetryError comes from, so its class is not loaded to check. */
function isRetryError(error: unknown): error is RetryError {
  return error instanceof Error && error.name === 'AI_RetryError';
}
