// CORS, open to every origin (payment is the access control). Preflights (OPTIONS) are answered by
// hono/cors; every other response gets Access-Control-Allow-Origin: * and Access-Control-Expose-Headers
// through withResponseHeaders, the values hono/cors sets, without its up-front read of c.res (see
// response-headers.ts for why).
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { withResponseHeaders } from './response-headers.ts';

export interface CorsOptions {
  allowHeaders: string[];
  exposeHeaders: string[];
}

export function openCors(options: CorsOptions): MiddlewareHandler {
  const preflight = cors({ origin: '*', allowHeaders: options.allowHeaders, exposeHeaders: options.exposeHeaders });
  const headers = corsHeaders(options);
  const others = withResponseHeaders(() => headers);
  return (c, next) => (c.req.method === 'OPTIONS' ? preflight(c, next) : others(c, next));
}

/** What every response other than a preflight carries. */
export function corsHeaders(options: CorsOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { 'Access-Control-Allow-Origin': '*' };
  if (options.exposeHeaders.length > 0) headers['Access-Control-Expose-Headers'] = options.exposeHeaders.join(',');
  return headers;
}
