// The one place errors become responses: { error, code, field? } with the ApiError's status.
// Unexpected errors are logged with the request id and answered as a bare 500, never with internals.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError } from '../errors.ts';
import { LedgerUnavailableError } from '../store/ledger.ts';
import type { Logger } from 'pino';

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  // reaches here only before any money moved (see PaymentGate.recordAfterSettlement): a retry may succeed
  if (error instanceof LedgerUnavailableError) {
    return new ApiError(503, 'ledger_unavailable', 'the payments database is unavailable; nothing was charged, retry later', {
      headers: { 'Retry-After': '5' },
      cause: error,
    });
  }
  if (error instanceof HTTPException && error.status < 500) {
    return new ApiError(error.status, 'invalid_request', error.message || 'bad request');
  }
  return undefined;
}

/** nginx's "client closed request": the status a request the client abandoned is counted under */
export const CLIENT_CLOSED = 499;

export function renderError(error: unknown, c: Context, log: Logger): Response {
  if (clientClosed(c)) {
    // not a server fault: quiet, and counted apart (status="499" in /metrics); nobody reads this answer
    log.debug({ reqId: c.get('requestId') }, 'client closed the request');
    return c.json({ error: 'client closed the request', code: 'client_closed' }, CLIENT_CLOSED as 400);
  }
  const apiError = toApiError(error);
  if (apiError) {
    if (apiError.status >= 500) log.warn({ cause: describeCause(apiError.cause ?? apiError), reqId: c.get('requestId') }, apiError.message);
    return c.json(apiError.toBody(), apiError.status as 400, apiError.headers);
  }
  log.error({ cause: describeCause(error), reqId: c.get('requestId') }, 'unhandled error');
  const internal = new ApiError(500, 'internal_error', 'internal error; nothing was charged');
  return c.json(internal.toBody(), 500);
}

/** Whether the client went away before we answered (its connection closed or the request stream aborted). */
function clientClosed(c: Context): boolean {
  const incoming = (c.env as { incoming?: { aborted?: boolean; destroyed?: boolean; complete?: boolean; socket?: { destroyed?: boolean } } } | undefined)?.incoming;
  if (c.req.raw.signal?.aborted) return true;
  return Boolean(incoming && (incoming.aborted || (incoming.socket?.destroyed && !incoming.complete)));
}

/**
 * What a log line says of an error: its kind, first message line, status and code, along its causes. Never the
 * error object itself: the AI SDK's errors carry the request body (the user's prompt, requestBodyValues) and the
 * upstream's answer (generated content, responseBody), which stay out of logs.
 */
export function describeCause(error: unknown, depth = 0): Record<string, unknown> | string {
  if (!(error instanceof Error)) return typeof error === 'string' ? error.split('\n')[0]!.slice(0, 200) : typeof error;
  const { statusCode, code, lastError, cause } = error as { statusCode?: unknown; code?: unknown; lastError?: unknown; cause?: unknown };
  const inner = lastError ?? cause;
  return {
    type: error.name,
    message: error.message.split('\n')[0]!.slice(0, 200),
    ...(typeof statusCode === 'number' ? { statusCode } : {}),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(inner !== undefined && depth < 3 ? { cause: describeCause(inner, depth + 1) } : {}),
  };
}
