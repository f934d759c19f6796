// The one error path of every surface. `errorAnswer` alone decides what an error becomes: its status, code and
// message, whether and at what level it is logged, and what the log line holds (never the request body, a prompt
// or anything the model produced: describeError, lib/log-safety.ts). Each surface only shapes the answer's JSON (an ErrorShape: the
// spec's { error, code, field? }, OpenAI's { error: { message, type, param, code } }, ...). The metrics count the
// status errorAnswer chose: a client that left is 499, never a 500. docs/errors.md states the rule.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError, type ErrorCode } from '../errors.ts';
import { LedgerUnavailableError } from '../store/ledger.ts';
import type { Logger } from 'pino';
import { describeError } from '../lib/log-safety.ts';

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

/** What an error is answered with, before a surface gives it its JSON shape. */
export interface ErrorAnswer {
  status: number;
  code: ErrorCode | 'client_closed';
  message: string;
  /** the request field at fault, as a dotted path */
  field?: string | undefined;
  headers: Record<string, string>;
  /** ApiError.details, for the surfaces whose shape carries them */
  details?: Record<string, unknown> | undefined;
}

/** A surface's JSON for an error answer. */
export type ErrorShape = (answer: ErrorAnswer) => unknown;

/** The spec routes' shape (service-spec.md): { error, code, field? }. */
export const specErrorShape: ErrorShape = ({ message, code, field }) => ({ error: message, code, ...(field ? { field } : {}) });

/** A surface's error shape for the paths under `prefix` (the longest matching prefix wins). */
export interface SurfaceShape {
  prefix: string;
  shape: ErrorShape;
}

/**
 * The one decision: what `error` is answered with, and what is logged of it. A client that left is quiet (debug)
 * and 499; an ApiError is its own answer, logged as a warning when it is a 5xx (an upstream or storage fault); anything
 * else is an error-level "unhandled error" and a bare 500. Log lines carry the request id and describeError(error).
 */
export function errorAnswer(error: unknown, c: Context, log: Logger): ErrorAnswer {
  return errorAnswerFor(error, { reqId: c.get('requestId') as string | undefined, left: clientClosed(c) }, log);
}

/** Who an answer is for: the request id the log lines carry, and whether the client left before it was answered. */
export interface Asker {
  reqId: string | undefined;
  left: boolean;
}

/** errorAnswer() for a request answered on node:http, outside the app (the paid lane). */
export function errorAnswerFor(error: unknown, { reqId, left }: Asker, log: Logger): ErrorAnswer {
  if (left) {
    // not a server fault: quiet, and counted apart (status="499" in /metrics); nobody reads this answer
    log.debug({ reqId }, 'client closed the request');
    return { status: CLIENT_CLOSED, code: 'client_closed', message: 'client closed the request', headers: {} };
  }
  const apiError = toApiError(error);
  if (apiError) {
    if (apiError.status >= 500) log.warn({ cause: describeError(apiError.cause ?? apiError), reqId }, apiError.message);
    return { status: apiError.status, code: apiError.code, message: apiError.message, field: apiError.field, headers: apiError.headers, details: apiError.details };
  }
  log.error({ cause: describeError(error), reqId }, 'unhandled error');
  return { status: 500, code: 'internal_error', message: 'internal error; nothing was charged', headers: {} };
}

/** An error answered in `shape` (the spec's by default). */
export function renderError(error: unknown, c: Context, log: Logger, shape: ErrorShape = specErrorShape): Response {
  const answer = errorAnswer(error, c, log);
  return c.json(shape(answer) as object, answer.status as 400, answer.headers);
}

/** The app's onError: each path's error in its surface's shape, the spec's where no surface claims the path. */
export function renderErrorBySurface(log: Logger, surfaces: readonly SurfaceShape[]): (error: Error, c: Context) => Response {
  const shapeFor = errorShapeByPath(surfaces);
  return (error, c) => renderError(error, c, log, shapeFor(c.req.path));
}

/** The error shape of the surface a path belongs to: the longest prefix that matches, else the spec's. */
export function errorShapeByPath(surfaces: readonly SurfaceShape[]): (path: string) => ErrorShape {
  const byLength = [...surfaces].sort((a, b) => b.prefix.length - a.prefix.length);
  return (path) => byLength.find((surface) => path.startsWith(surface.prefix))?.shape ?? specErrorShape;
}

/** Whether the client went away before we answered (its connection closed or the request stream aborted). */
function clientClosed(c: Context): boolean {
  const incoming = (c.env as { incoming?: ClosableIncoming } | undefined)?.incoming;
  return Boolean(c.req.raw.signal?.aborted || (incoming && incomingClosed(incoming)));
}

interface ClosableIncoming {
  aborted?: boolean;
  complete?: boolean;
  socket?: { destroyed?: boolean } | null;
}

/** Whether the client of a node:http request went away before it was answered. */
export function incomingClosed(incoming: ClosableIncoming): boolean {
  return Boolean(incoming.aborted || (incoming.socket?.destroyed && !incoming.complete));
}
