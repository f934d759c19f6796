// URLs an upstream hands out (images answered by URL) are fetched only from public addresses: the host name is
// resolved once, every address it resolves to is checked against loopback, private, link-local, unique-local
// and other non-public ranges, and the connection goes to the checked address (no second resolution that a
// DNS answer could turn to 127.0.0.1 in between). The provider's own configured origin is exempt: operators
// run upstreams on private addresses on purpose.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { UpstreamUrlRejectedError } from './limited-fetch.ts';

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // local NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is one anybody on the internet could reach (IPv4-mapped and NAT64 forms judged by their IPv4). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const embedded = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (embedded) return isPublicAddress(embedded);
  const mappedHex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mappedHex) {
    const high = parseInt(mappedHex[1]!, 16);
    const low = parseInt(mappedHex[2]!, 16);
    return isPublicAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  return !NOT_PUBLIC.check(address, 'ipv6');
}

type Resolve = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` for node:net that resolves once and hands the connection only addresses it checked; a name with
 * any non-public address is refused outright (one private answer among public ones is a rebinding attempt).
 */
export function publicOnlyLookup(resolve: Resolve = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { all: true, family: options.family as number | undefined ?? 0 }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((entry) => !isPublicAddress(entry.address));
      if (refused || addresses.length === 0) {
        return callback(new UpstreamUrlRejectedError(`upstream URL host ${hostname} resolves to a non-public address`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * Routes a provider's calls: its configured origin through `trusted`, any other URL (an image it answered by
 * URL) through `untrusted`, which must connect only through publicOnlyLookup. An IP literal never reaches a
 * lookup, so it is checked here.
 */
export function guardOtherOrigins(trustedOrigin: string, trusted: typeof fetch, untrusted: typeof fetch): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin === trustedOrigin) return trusted(input, init);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !isPublicAddress(host)) throw new UpstreamUrlRejectedError('upstream URL points at a non-public address');
    // a refused address is final: surfaced as itself, not as a network failure the SDK would retry
    return untrusted(input, init).catch((error: unknown) => {
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof UpstreamUrlRejectedError ? cause : error;
    });
  };
}
