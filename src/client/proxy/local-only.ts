// Who may use the proxy: programs on this machine, never a web page. The proxy spends the wallet on any request it
// takes, so a page the user opens must not reach it: not by posting to 127.0.0.1 (the browser sends the page's
// Origin), nor through a name of its own resolved to 127.0.0.1 (DNS rebinding: the Host is then that name).
// Agents and SDKs send no Origin and a loopback Host.
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

/** why a request is not from a program on this machine, or undefined when it is */
export function foreignRequest(headers: IncomingHttpHeaders): string | undefined {
  const host = headers.host;
  if (host !== undefined && !isLoopbackName(hostnameOf(host))) return `Host ${host.slice(0, 100)} is not this machine (127.0.0.1, localhost, ::1)`;
  // a page of this machine's own (a local web UI) may; a sandboxed page or a file sends Origin: null, refused
  const origin = headers.origin;
  if (origin !== undefined && !(URL.canParse(origin) && isLoopbackName(new URL(origin).hostname))) {
    return `a web page (Origin ${origin.slice(0, 100)}) may not spend this wallet`;
  }
  return undefined;
}

function hostnameOf(host: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(host);
  if (bracketed) return bracketed[1]!;
  return host.replace(/:\d*$/, '');
}

function isLoopbackName(name: string): boolean {
  const bare = name.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}
