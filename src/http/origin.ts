// The absolute origin clients reach us at: the configured public URL, else the proxy's forwarded
// protocol and host (when trusted), else the request's own URL.
import type { Context } from 'hono';

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function requestOrigin(c: Context, options: { publicUrl?: string; trustProxy: boolean }): string {
  if (options.publicUrl) return options.publicUrl.replace(/\/+$/, '');
  const url = parsedOrigin(c.req.url);
  if (options.trustProxy) {
    const proto = c.req.header('X-Forwarded-Proto')?.split(',')[0]?.trim().toLowerCase();
    const host = c.req.header('X-Forwarded-Host')?.split(',')[0]?.trim();
    const protocol = proto === 'http' || proto === 'https' ? proto : url.protocol.slice(0, -1);
    const authority = host && HOST.test(host) ? host : url.host;
    return `${protocol}://${authority}`;
  }
  return url.origin;
}

type OriginParts = Pick<URL, 'protocol' | 'host' | 'origin'>;

/**
 * protocol, host and origin of an absolute URL. They depend only on what precedes the path, so they are
 * parsed once per distinct "http(s)://authority" made only of characters that cannot end or alter an
 * authority (URL parsing is a visible share of a 402 answer); anything else is parsed whole, as before.
 * The authority comes from the client's Host header, so the memo is bounded.
 */
const parsed = new Map<string, OriginParts>();
const MAX_PARSED = 256;
const PLAIN_ORIGIN = /^https?:\/\/[A-Za-z0-9._:[\]-]+$/;

export function parsedOrigin(href: string): OriginParts {
  const pathStart = href.indexOf('/', href.indexOf('//') + 2);
  const key = pathStart === -1 ? href : href.slice(0, pathStart);
  let parts = parsed.get(key);
  if (parts) return parts;
  if (!PLAIN_ORIGIN.test(key)) return new URL(href);
  const url = new URL(key);
  parts = { protocol: url.protocol, host: url.host, origin: url.origin };
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(key, parts);
  return parts;
}
