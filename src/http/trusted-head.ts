// A response head whose header values are known to be valid, written without node:http checking each one again.
// node:http tests every value it is handed against /[^\t\x20-\x7e\x80-\xff]/; for the unpaid 402's ~4.9 KB
// PAYMENT-REQUIRED value that test alone cost ~16 us (6-8% of the (then) quote lane's CPU per answer, in its profile and
// in a micro-benchmark of the regex on this machine). Values that setHeader() already checked, the response's own
// header table, are written unchecked; so the table is filled here directly, and node:http writes the head
// exactly as it would have (status line, the values in this order, Date, Connection and Keep-Alive, Content-Length
// handling). The table is an internal of node:http: where it cannot be found, the head is written the checked way.
import { OutgoingMessage, type ServerResponse } from 'node:http';
import { lowerCaseName } from './header-name.ts';

const headerTable = Object.getOwnPropertySymbols(new OutgoingMessage()).find((symbol) => symbol.description === 'kOutHeaders');

/**
 * writeHead(status, headers) for values that are plain printable ASCII by construction (base64, ids already
 * checked, constants). Names are written as given.
 */
export function writeTrustedHead(response: ServerResponse, status: number, headers: readonly (readonly [name: string, value: string])[]): void {
  const target = response as unknown as Record<symbol, unknown>;
  if (headerTable === undefined || target[headerTable] !== null) {
    response.writeHead(status, Object.fromEntries(headers));
    return;
  }
  const table: Record<string, [string, string]> = Object.create(null);
  for (const [name, value] of headers) table[lowerCaseName(name)] = [name, value];
  target[headerTable] = table;
  response.writeHead(status);
}
