// A trusted-proxy entry of the configuration: an IP address or a CIDR range (v4 or v6). Both the config's
// validation and the origin rules of http/origin.ts read entries with it.
import { isIP } from 'node:net';

/** Whether an entry of trustedProxies is an IP address or a CIDR range (the config check uses it). */
export function isProxyEntry(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}
