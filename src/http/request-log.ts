// The one info line per request (id, method, path, status, milliseconds). Never the body, a header or the
// query: prompts and payment proofs stay out of the logs. The destination is buffered (src/logging.ts).
import type { Logger } from 'pino';

export interface RequestLine {
  reqId: string;
  method: string;
  path: string;
  status: number;
  /** performance.now() when the request arrived */
  started: number;
}

export function logRequest(log: Logger, { started, ...line }: RequestLine): void {
  if (!log.isLevelEnabled('info')) return;
  log.info({ ...line, ms: +(performance.now() - started).toFixed(2) }, 'request');
}
