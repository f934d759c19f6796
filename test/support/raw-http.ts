// HTTP/1.1 over a plain TCP socket, for requests fetch refuses to send (a Host with a space, backslashes or a bare
// CR in the request-target, lying Content-Length, methods such as TRACE): the bytes go out as given, and the
// server's whole answer is read until it closes the connection.
import { connect } from 'node:net';

export interface RawAnswer {
  /** the first (non-interim) response's status; NaN when the server closed without answering */
  status: number;
  /** the first response's headers, names lower-cased */
  headers: Map<string, string>;
  /** the first response's body (de-chunked when it was sent chunked) */
  body: string;
  /** every byte the server sent, as text */
  text: string;
}

/**
 * Sends `bytes` and resolves once the server closes the connection. The socket is half-closed once the server
 * starts answering (Node takes a client's FIN as the client leaving, and drops an answer still being made), or at
 * once when `halfClose` says so: for requests the server would otherwise wait on (a body shorter than announced).
 */
export function sendRaw(url: string, bytes: string | Buffer, options: { halfClose?: boolean } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (socket.writable && withoutInterim(Buffer.concat(chunks)).length > 0) socket.end();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // the server may reset a connection it refused while we were still writing: what it sent still counts
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => resolve(parseAnswer(Buffer.concat(chunks))));
    if (options.halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

export function parseAnswer(raw: Buffer): RawAnswer {
  const text = raw.toString('utf8');
  raw = withoutInterim(raw);
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0) return { status: Number.NaN, headers: new Map(), body: '', text };
  const [statusLine = '', ...headerLines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = new Map(
    headerLines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  let rest = raw.subarray(headEnd + 4);
  const length = headers.get('content-length');
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') rest = dechunk(rest);
  else if (length !== undefined) rest = rest.subarray(0, Number(length));
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.toString('utf8'), text };
}

/** The bytes after any interim answers (100 Continue), which come before the response. */
function withoutInterim(raw: Buffer): Buffer {
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 13).toString('latin1')) && raw.indexOf('\r\n\r\n') >= 0) {
    raw = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
  }
  return raw;
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
