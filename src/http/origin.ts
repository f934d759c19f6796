// The absolute origin clients reach us at: the configured public URL, else the proxy's forwarded
// protocol and host (when trusted), else the request's own URL.
import type { Context } from 'hono';

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function requestOrigin(c: Context, options: { publicUrl?: string; trustProxy: boolean }): string {
  if (options.publicUrl) return options.publicUrl.replace(/\/+$/, '');
  const url = new URL(c.req.url);
  if (options.trustProxy) {
    const proto = c.req.header('X-Forwarded-Proto')?.split(',')[0]?.trim().toLowerCase();
    const host = c.req.header('X-Forwarded-Host')?.split(',')[0]?.trim();
    const protocol = proto === 'http' || proto === 'https' ? proto : url.protocol.slice(0, -1);
    const authority = host && HOST.test(host) ? host : url.host;
    return `${protocol}://${authority}`;
  }
  return url.origin;
}
