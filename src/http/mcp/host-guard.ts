// DNS-rebinding protection for /mcp: a web page whose name an attacker points at this gateway's address makes the
// browser send the attacker's name as Host (and the page's origin as Origin). Both are checked against the names
// the gateway is known by: the configured public URL, the address it is bound to, and, in sandbox mode or on a
// loopback bind, localhost. A request from a trusted proxy is judged by the host it forwarded. With none of these
// known (a wildcard bind with no public URL), nothing can be checked and nothing is refused.
import type { Context } from 'hono';
import type { IncomingMessage } from 'node:http';
import type { Config } from '../../config/load.ts';
import { isTrustedProxy } from '../origin.ts';

const LOCALHOST = ['localhost', '127.0.0.1', '::1'];
const WILDCARD = new Set(['0.0.0.0', '::', '']);

/** The host names (lowercase, IPv6 without brackets) /mcp answers to, or undefined when any is accepted. */
export function allowedHostnames(config: Pick<Config, 'publicUrl' | 'host' | 'sandbox'>): ReadonlySet<string> | undefined {
  const names = new Set<string>();
  if (config.publicUrl) names.add(hostnameOf(new URL(config.publicUrl).host)!);
  if (!WILDCARD.has(config.host)) names.add(config.host.toLowerCase().replace(/^\[|\]$/g, ''));
  if (config.sandbox.enabled || LOCALHOST.includes(config.host) || config.host.startsWith('127.')) for (const name of LOCALHOST) names.add(name);
  return names.size > 0 ? names : undefined;
}

/** The name part of a Host value (`name:port`, `[v6]:port`), lowercase; undefined when it is no host. */
function hostnameOf(host: string): string | undefined {
  const match = /^\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?$|^([A-Za-z0-9.-]+)(?::\d{1,5})?$/.exec(host.trim());
  return (match?.[1] ?? match?.[2])?.toLowerCase();
}

/** Why this request is refused (a name the gateway is not known by), or undefined when it may go on. */
export function rebindingRefusal(c: Context, config: Pick<Config, 'trustedProxies'>, allowed: ReadonlySet<string> | undefined): string | undefined {
  if (!allowed) return undefined;
  const host = forwardedHost(c, config) ?? c.req.header('Host') ?? '';
  if (!allowed.has(hostnameOf(host) ?? '')) return `Host ${JSON.stringify(host.slice(0, 100))} is not a name this server answers to`;
  const origin = c.req.header('Origin');
  if (origin !== undefined && origin !== 'null' && !allowed.has(originHostname(origin) ?? '')) return `Origin ${JSON.stringify(origin.slice(0, 100))} may not call this server`;
  return undefined;
}

function originHostname(origin: string): string | undefined {
  try {
    return hostnameOf(new URL(origin).host);
  } catch {
    return undefined;
  }
}

/** X-Forwarded-Host of a request that came through a configured proxy (origin.ts believes the same). */
function forwardedHost(c: Context, config: Pick<Config, 'trustedProxies'>): string | undefined {
  const remote = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress;
  if (!isTrustedProxy(config.trustedProxies, remote)) return undefined;
  return c.req.header('X-Forwarded-Host')?.split(',')[0]?.trim() || undefined;
}
