// X-Request-Id: the caller's own id when it is a plain token (at most 255 of [A-Za-z0-9_=-]), else a fresh
// UUID; kept as c.get('requestId') for the logs and sent back on the response. The rules of
// hono/request-id, applied through withResponseHeaders (see response-headers.ts for why).
import type { MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import { withResponseHeaders } from './response-headers.ts';

declare module 'hono' {
  interface ContextVariableMap {
    requestId: string;
  }
}

const HEADER = 'X-Request-Id';
const MAX_LENGTH = 255;
const UNSAFE = /[^\w\-=]/;

export function requestId(): MiddlewareHandler {
  return withResponseHeaders((c) => {
    const id = requestIdFrom(c.req.header(HEADER));
    c.set('requestId', id);
    return { [HEADER]: id };
  });
}

/** The id of a request that sent `header` as its X-Request-Id. */
export function requestIdFrom(header: string | undefined): string {
  return !header || header.length > MAX_LENGTH || UNSAFE.test(header) ? randomUUID() : header;
}
