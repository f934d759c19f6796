// Headers a middleware puts on every response. They are set with c.header() before the handler runs, so
// Hono merges them into whatever response the handler builds with c.body()/c.json()/c.text(), as
// hono/cors and hono/request-id did. What hono/cors also did is read c.res before the handler ran: Hono
// then copies the handler's response when it is set, and the copy turns a string body into a web
// ReadableStream that @hono/node-server must read back chunk by chunk; on the 402 path that cost more
// than everything else the answer does. Here c.res is only looked at once it exists: a response built
// without the prepared headers (a raw Response) gets the missing ones added, copied first when its
// headers are immutable (fetch(), Response.redirect()), as Hono would.
// The same headers are also kept as a plain record (c.get('responseHeaders')) for plainResponse(): a response
// Hono builds has a web Headers, which checks every value and which @hono/node-server converts back for
// node:http; for the unpaid 402 and its several-KB PAYMENT-REQUIRED that was a visible share of the answer, and a
// paid call's JSON answer (jsonResponse) comes ~0.02 ms sooner than through c.json() (bench/upstream-overhead.ts).
import type { Context, MiddlewareHandler } from 'hono';
import type { RequestNotes } from '../api/request-notes.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** what every response to this request carries (see withResponseHeaders) */
    responseHeaders: Readonly<Record<string, string>>;
  }
}

/** responses built by plainResponse(): they hold the headers already */
const complete = new WeakSet<Response>();

export function withResponseHeaders(headersOf: (c: Context) => Readonly<Record<string, string>>): MiddlewareHandler {
  return async (c, next) => {
    const headers = headersOf(c);
    for (const name in headers) c.header(name, headers[name]);
    const gathered = c.get('responseHeaders');
    c.set('responseHeaders', gathered ? { ...gathered, ...headers } : headers);
    await next();
    if (!complete.has(c.res)) ensureResponseHeaders(c, headers);
  };
}

/**
 * A string response whose headers stay a plain record, every middleware's headers included (the handler's
 * own win, as with c.body()): @hono/node-server hands it to node:http as it is.
 */
export function plainResponse(c: Context, body: string, status: number, headers: Readonly<Record<string, string>>): Response {
  const response = new Response(body, { status, headers: { ...c.get('responseHeaders'), ...headers } });
  complete.add(response);
  return response;
}

/** What c.json() answers, as a plainResponse(): the body serialised, its headers a plain record to the socket. */
export function jsonResponse(c: Context, body: unknown, status: number, headers: Readonly<Record<string, string>> = {}): Response {
  return plainResponse(c, JSON.stringify(body), status, { ...headers, 'Content-Type': 'application/json' });
}

function ensureResponseHeaders(c: Context, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) {
    if (c.res.headers.has(name)) continue;
    try {
      c.res.headers.set(name, headers[name]!);
    } catch {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set(name, headers[name]!);
    }
  }
}

/** A route's answer with the headers that say what its request ignored or lowered (api/request-notes.ts). */
export function withNotes(response: Response, notes: RequestNotes | undefined): Response {
  const headers = notes?.headers();
  if (!headers) return response;
  for (const name in headers) response.headers.set(name, headers[name]!);
  return response;
}
