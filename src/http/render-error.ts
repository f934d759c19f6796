// The one place errors become responses: { error, code, field? } with the ApiError's status.
// Unexpected errors are logged with the request id and answered as a bare 500, never with internals.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError } from '../errors.ts';
import type { Logger } from 'pino';

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException && error.status < 500) {
    return new ApiError(error.status, 'invalid_request', error.message || 'bad request');
  }
  return undefined;
}

export function renderError(error: unknown, c: Context, log: Logger): Response {
  const apiError = toApiError(error);
  if (apiError) {
    if (apiError.status >= 500) log.warn({ err: apiError.cause ?? apiError, reqId: c.get('requestId') }, apiError.message);
    return c.json(apiError.toBody(), apiError.status as 400, apiError.headers);
  }
  log.error({ err: error, reqId: c.get('requestId') }, 'unhandled error');
  const internal = new ApiError(500, 'internal_error', 'internal error; nothing was charged');
  return c.json(internal.toBody(), 500);
}
