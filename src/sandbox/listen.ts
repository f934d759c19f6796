// Where a sandbox chain's JSON-RPC listens and the URL it is known by. By default 127.0.0.1 on a port the OS
// picks; in a container it listens on every interface (0.0.0.0) on a fixed port, and `/healthz` hands out
// the address the buyer's machine reaches it at (a published port on the Docker host), not the container's.
import { isIP } from 'node:net';

export interface ChainListen {
  /** the interface to bind: an IP address or a host name */
  host: string;
  /** the port; 0 lets the OS pick one */
  port: number;
  /** the host name or IP put in the URL handed to buyers; default: where the service reaches the chain itself */
  publicHost?: string;
}

export const LOCAL_ONLY: ChainListen = { host: '127.0.0.1', port: 0 };

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** `host` as it goes into a URL: an IPv6 address in brackets. */
function urlHost(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return isIP(bare) === 6 ? `[${bare}]` : bare;
}

/** The URL the service itself uses: a wildcard bind is reached on the loopback interface. */
export function localRpcUrl(listen: ChainListen, port: number): string {
  if (WILDCARDS.has(listen.host)) return `http://${isIP(listen.host.replace(/[[\]]/g, '')) === 6 ? '[::1]' : '127.0.0.1'}:${port}`;
  return `http://${urlHost(listen.host)}:${port}`;
}

/** The URL buyers are given (in /healthz and the startup log). */
export function publicRpcUrl(listen: ChainListen, port: number): string {
  return listen.publicHost ? `http://${urlHost(listen.publicHost)}:${port}` : localRpcUrl(listen, port);
}

/** The bind address as node:net and anvil take it: no brackets. */
export const bindHost = (listen: ChainListen): string => listen.host.replace(/^\[(.*)\]$/, '$1');
