// The absolute origin clients reach us at: the configured public URL; else, for a request that came through a
// configured proxy, its forwarded protocol and host; else the address the connection was accepted on. Nothing
// a client alone sends (X-Forwarded-*, Host) decides the `resource` URL, media URLs or a stored receipt.
import type { Context } from 'hono';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export interface OriginOptions {
  publicUrl?: string;
  /** addresses (or CIDR ranges) of the proxies whose X-Forwarded-Proto/Host are believed */
  trustedProxies: readonly string[];
}

/** The proxies' addresses as a BlockList, built once per list (the config's list lives as long as the process). */
const proxyLists = new WeakMap<readonly string[], BlockList>();

export function proxyList(entries: readonly string[]): BlockList {
  let list = proxyLists.get(entries);
  if (!list) {
    list = new BlockList();
    for (const entry of entries) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) list.addAddress(address, family);
      else list.addSubnet(address, Number(prefix), family);
    }
    proxyLists.set(entries, list);
  }
  return list;
}


/** Whether a connection from `address` came through one of the configured proxies. */
export function isTrustedProxy(entries: readonly string[], address: string | undefined): boolean {
  if (!address || entries.length === 0) return false;
  const list = proxyList(entries);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return list.check(mapped, 'ipv4') || list.check(address, 'ipv6');
  return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

declare module 'hono' {
  interface ContextVariableMap {
    /** requestOrigin() of this request, worked out once (a paid call asks for it several times) */
    requestOrigin: string;
  }
}

export function requestOrigin(c: Context, options: OriginOptions): string {
  let origin = c.get('requestOrigin');
  if (origin === undefined) {
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    c.set('requestOrigin', (origin = originOf({ header: (name) => c.req.header(name), socket, url: c.req.url }, options)));
  }
  return origin;
}

/** What the origin is worked out from: a request's headers, its connection, and its URL. */
export interface OriginSource {
  header(name: string): string | undefined;
  /** the connection it came on; absent in-process (app.request()) */
  socket?: Pick<Socket, 'localAddress' | 'localPort' | 'remoteAddress'> | undefined;
  /** the absolute URL, used only without a socket */
  url: string;
}

export function originOf(request: OriginSource, options: OriginOptions): string {
  if (options.publicUrl) return options.publicUrl.replace(/\/+$/, '');
  const { socket } = request;
  // without a socket (app.request() in-process) there is nothing but the URL to go by
  if (!socket) return parsedOrigin(request.url).origin;
  const { ownAuthority, ownOrigin, throughProxy } = connectionOf(socket, options);
  if (throughProxy) {
    const proto = request.header('X-Forwarded-Proto')?.split(',')[0]?.trim().toLowerCase();
    const forwardedHost = request.header('X-Forwarded-Host')?.split(',')[0]?.trim();
    const host = request.header('Host');
    const protocol = proto === 'http' || proto === 'https' ? proto : 'http';
    const authority = forwardedHost && HOST.test(forwardedHost) ? forwardedHost : host && HOST.test(host) ? host : ownAuthority;
    return `${protocol}://${authority}`;
  }
  return ownOrigin;
}

/** What a connection says of the origin: the address it was accepted on, and whether it came from a trusted proxy. */
interface ConnectionOrigin {
  options: OriginOptions;
  ownAuthority: string;
  /** `http://` and ownAuthority */
  ownOrigin: string;
  throughProxy: boolean;
}

/** per connection, worked out at its first request: neither its addresses nor the configuration change after */
const connections = new WeakMap<object, ConnectionOrigin>();

function connectionOf(socket: NonNullable<OriginSource['socket']>, options: OriginOptions): ConnectionOrigin {
  let known = connections.get(socket);
  if (known?.options !== options) {
    const local = socket.localAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '') ?? '127.0.0.1';
    const ownAuthority = `${isIP(local) === 6 ? `[${local}]` : local}:${socket.localPort}`;
    known = { options, ownAuthority, ownOrigin: `http://${ownAuthority}`, throughProxy: isTrustedProxy(options.trustedProxies, socket.remoteAddress) };
    connections.set(socket, known);
  }
  return known;
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
