// The load generator's connection for closed loops: one kept-alive TCP socket that writes a request already
// serialised to bytes and reads the answer with the least parsing that finds its end (the status, then a
// Content-Length or chunked body). node:http's client parses every header into objects, runs an Agent and
// emits a dozen events per answer: ~80 us of CPU per request on this 2-core machine, the same order as the
// servers measured, so on a machine the generator shares it took CPU the servers needed and pulled every
// server-to-server ratio towards 1 (bench/unpaid-402.ts: 77 against 113 us of server CPU per answer, a 1.47x
// difference, came out as 1.32x in requests per second). This one costs a fraction of that.
import { connect, type Socket } from 'node:net';

/** A request as the load sends it (load.ts names it RequestSpec): method, path, headers and body. */
export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** The request as bytes on the wire: request line, Host, the spec's headers, the body. */
export function requestBytes(origin: URL, spec: WireRequest): Buffer {
  const head = [`${spec.method} ${spec.path} HTTP/1.1`, `Host: ${origin.host}`, ...Object.entries(spec.headers).map(([name, value]) => `${name}: ${value}`)];
  if (spec.body !== undefined && !Object.keys(spec.headers).some((name) => name.toLowerCase() === 'content-length')) head.push(`Content-Length: ${spec.body.length}`);
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), spec.body ?? Buffer.alloc(0)]);
}

/** An answer as the connection reads it: its status, its head (status line and headers, as sent) and its body. */
export interface LeanAnswer {
  status: number;
  head: string;
  /** the body as sent (a chunked one with its chunk framing) */
  body: Buffer;
  /** when the body first held the marker the request was sent with (performance.now()), if it did */
  markerAt?: number;
}

/** The value of header `name` in an answer's head (the first, if repeated). */
export function headerIn(head: string, name: string): string | undefined {
  const at = head.toLowerCase().indexOf(`\r\n${name.toLowerCase()}:`);
  if (at === -1) return undefined;
  const start = at + name.length + 3;
  const end = head.indexOf('\r\n', start);
  return head.slice(start, end === -1 ? undefined : end).trim();
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');

/** A kept-alive connection answering one request at a time; reconnects after a close or an error. */
export class LeanConnection {
  private socket: Socket | undefined;
  private pending: { resolve: (answer: LeanAnswer) => void; reject: (error: Error) => void } | undefined;
  private buffered: Buffer = Buffer.alloc(0);
  private marker: { bytes: Buffer; seen?: (() => void) | undefined; at?: number } | undefined;
  private readonly origin: URL;

  constructor(origin: URL) {
    this.origin = origin;
  }

  /**
   * Sends `bytes` and resolves with the answer once the whole answer is read; with `marker`, also when its body
   * first held those bytes (a streamed answer's first token), `seen` called then.
   */
  send(bytes: Buffer, marker?: Buffer, seen?: () => void): Promise<LeanAnswer> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.buffered = Buffer.alloc(0);
      this.marker = marker ? { bytes: marker, seen } : undefined;
      (this.socket ?? this.open()).write(bytes);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private open(): Socket {
    const socket = connect({ host: this.origin.hostname, port: Number(this.origin.port), noDelay: true });
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    const fail = (error: Error) => {
      if (this.socket !== socket) return; // a socket closed after its last answer: nothing of it is pending
      this.socket = undefined;
      const pending = this.pending;
      this.pending = undefined;
      pending?.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed before the answer ended')));
    this.socket = socket;
    return socket;
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf(HEAD_END);
    if (headEnd === -1) return;
    const head = this.buffered.toString('latin1', 0, headEnd);
    const bodyStart = headEnd + HEAD_END.length;
    if (this.marker && this.marker.at === undefined && this.buffered.indexOf(this.marker.bytes, bodyStart) !== -1) {
      this.marker.at = performance.now();
      this.marker.seen?.();
    }
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let complete: boolean;
    if (length) complete = this.buffered.length - bodyStart >= Number(length[1]);
    else if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) complete = this.buffered.subarray(-CHUNKED_END.length).equals(CHUNKED_END) && this.buffered.length - bodyStart >= CHUNKED_END.length;
    else complete = true; // no body (a 204 or 304) or one that ends with the connection: the head is the answer
    if (!complete) return;
    const status = Number(head.slice(9, 12));
    if (/\r\nconnection:\s*close/i.test(head)) this.close();
    const body = this.buffered.subarray(bodyStart, length ? bodyStart + Number(length[1]) : undefined);
    const pending = this.pending;
    this.pending = undefined;
    this.buffered = Buffer.alloc(0);
    pending?.resolve({ status, head, body, ...(this.marker?.at === undefined ? {} : { markerAt: this.marker.at }) });
  }
}
