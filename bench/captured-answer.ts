// One answer of the gateway captured byte for byte (status, headers, body), for bench/bare.ts to replay from a bare
// node:http server: the floor under the gateway's own answer, the same bytes with nothing computed.
import { sendOnce, type RequestSpec } from './load.ts';

/** what bare.ts reads: per path, the answer it replays */
export interface Captured {
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

/** set by node:http on every answer it writes: not replayed as captured */
const DROPPED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export async function capture(origin: URL, spec: RequestSpec): Promise<Captured> {
  const reply = await sendOnce(origin, spec);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers)) {
    if (value !== undefined && !DROPPED_HEADERS.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: reply.status, headers, body: reply.body.toString('base64') };
}
