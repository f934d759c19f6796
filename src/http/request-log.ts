// The one info line per request (id, method, path, status, milliseconds). Never the body, a header or the
// query: prompts and payment proofs stay out of the logs. The destination is buffered (src/logging.ts).
import type { Logger } from 'pino';
import { logRequestLine, type RequestLineFields } from '../logging.ts';

/** The request line's fields, with the time the request arrived instead of how long it took. */
export interface RequestLine extends Omit<RequestLineFields, 'ms'> {
  /** performance.now() when the request arrived */
  started: number;
}

export function logRequest(log: Logger, { started, reqId, method, path, status }: RequestLine): void {
  logRequestLine(log, { reqId, method, path, status, ms: Math.round((performance.now() - started) * 100) / 100 });
}
