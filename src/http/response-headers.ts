// Headers a middleware puts on every response. They are set with c.header() before the handler runs, so
// Hono merges them into whatever response the handler builds with c.body()/c.json()/c.text(), as
// hono/cors and hono/request-id did. What hono/cors also did is read c.res before the handler ran: Hono
// then copies the handler's response when it is set, and the copy turns a string body into a web
// ReadableStream that @hono/node-server must read back chunk by chunk; on the 402 path that cost more
// than everything else the answer does. Here c.res is only looked at once it exists: a response built
// without the prepared headers (a raw Response) gets the missing ones added, copied first when its
// headers are immutable (fetch(), Response.redirect()), as Hono would.
import type { Context, MiddlewareHandler } from 'hono';

export function withResponseHeaders(headersOf: (c: Context) => Readonly<Record<string, string>>): MiddlewareHandler {
  return async (c, next) => {
    const headers = headersOf(c);
    for (const name in headers) c.header(name, headers[name]);
    await next();
    ensureResponseHeaders(c, headers);
  };
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
