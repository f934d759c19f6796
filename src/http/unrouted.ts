// What answers a request no route handled: 405 with Allow when the path is routed for other methods, else
// 404. The app's own router is asked at that moment, so every route, whichever module registered it, gets
// the same 405 without a line of its own, and requests that are routed pay nothing for it.
import type { Hono, NotFoundHandler } from 'hono';
import { METHOD_NAME_ALL } from 'hono/router';
import { ApiError } from '../errors.ts';

/** The methods routes answer at this path, sorted; HEAD beside GET, as Hono answers HEAD through GET routes. */
export function allowedMethods(app: Hono, path: string): string[] {
  const allowed = new Set<string>();
  // ALL is middleware (app.use) or a catch-all: it says nothing about which methods the path serves
  const methods = new Set(app.routes.map((route) => route.method).filter((method) => method !== METHOD_NAME_ALL));
  for (const method of methods) {
    if (!app.router.match(method, path)[0].some(([[, route]]) => route.method === method)) continue;
    allowed.add(method);
    if (method === 'GET') allowed.add('HEAD');
  }
  return [...allowed].sort();
}

export function unrouted(app: Hono): NotFoundHandler {
  return (c) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length === 0) throw new ApiError(404, 'not_found', 'no such route; see /openapi.json');
    throw new ApiError(405, 'method_not_allowed', `${c.req.method} is not allowed here; use ${allowed.join(' or ')}`, {
      headers: { Allow: allowed.join(', ') },
    });
  };
}
