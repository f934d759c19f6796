// Requests that never reach a route still get the service's one JSON error shape: those Node's HTTP parser
// rejects (headers over the size limit, a malformed request line, a request too slow to arrive), those Node
// answers itself (CONNECT, which it would drop unanswered; an Expect other than 100-continue, a bare 417), and
// those @hono/node-server cannot turn into a Request (a request-target with backslashes, a Host that is not a host),
// and an HTTP/1.1 request without Host (Node's own answer is a bare, empty 400: the server is created with
// requireHostHeader off, and requireHost answers it).
import { STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { isIP, type Socket } from 'node:net';
import { RequestError } from '@hono/node-server';
import type { Logger } from 'pino';
import { ApiError } from '../errors.ts';
import { type ErrorShape } from './render-error.ts';
import { describeError } from '../lib/log-safety.ts';

const MALFORMED = 'malformed HTTP request';
/** How much of a refused Expect request's body is read before the 417, and how long it is waited for. */
const EXPECT_BODY_LINGER_BYTES = 4 * 1024 * 1024;
const EXPECT_BODY_LINGER_MS = 2_000;

function errorFor(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'headers_too_large', 'request headers are over the size limit (16 KiB)');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'request_timeout', 'the request did not arrive in time');
  return new ApiError(400, 'invalid_request', MALFORMED);
}

/** Writes the error as the whole HTTP answer on a socket no response object owns, then closes it. */
function endWithError(socket: Socket, apiError: ApiError): void {
  const body = JSON.stringify(apiError.toBody());
  const headers = Object.entries(apiError.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function answerParserErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    endWithError(socket, errorFor(error.code));
  });
  // without a listener Node closes a CONNECT's connection with no answer at all; this service is no proxy
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    endWithError(socket, new ApiError(400, 'invalid_request', 'CONNECT is not supported: this service is not a proxy'));
  });
  // without a listener Node answers an Expect it does not know with a bare 417
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const apiError = new ApiError(417, 'invalid_request', 'only "Expect: 100-continue" is supported', { field: 'Expect' });
    // Answered once the body is read (and dropped): a connection closed while the client still sends its body
    // is reset, and the reset can discard this answer before the client reads it. Bounded: past
    // EXPECT_BODY_LINGER_BYTES, or for a client that waits for us before sending its body, answered anyway.
    let read = 0;
    const answer = () => {
      clearTimeout(timer);
      if (!response.headersSent) response.writeHead(apiError.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(apiError.toBody()));
    };
    const timer = setTimeout(answer, EXPECT_BODY_LINGER_MS);
    request.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > EXPECT_BODY_LINGER_BYTES) answer();
    });
    request.once('end', answer);
    request.once('error', answer);
    request.resume();
  });
}

/**
 * The `errorHandler` of @hono/node-server's request listener (its default answers a bare 400 or 500): a request it
 * cannot build is a 400, anything else that escaped the app a logged 500, both as JSON.
 */
export function answerUnbuildableRequests(log: Logger): (error: unknown) => Response {
  return (error) => {
    const apiError =
      error instanceof RequestError
        ? new ApiError(400, 'invalid_request', MALFORMED)
        : new ApiError(500, 'internal_error', 'internal error; nothing was charged');
    if (apiError.status >= 500) log.error({ cause: describeError(error) }, 'unhandled error outside the app');
    return Response.json(apiError.toBody(), { status: apiError.status, headers: { Connection: 'close' } });
  };
}

/**
 * `listener` behind the Host check RFC 9112 asks of HTTP/1.1 (section 3.2: a request without Host is a 400), answered
 * as JSON in the shape of the route's surface and naming the header. The server must be created with
 * `requireHostHeader: false`, or Node answers first with a bare, empty 400. HTTP/1.0 has no Host requirement: such a
 * request is served, its URL built on the address the connection came in on (the origin never comes from Host:
 * origin.ts).
 */
export function requireHost(listener: RequestListener, shapeFor: (path: string) => ErrorShape): RequestListener {
  return (request, response) => {
    if (request.headers.host !== undefined) return listener(request, response);
    if (request.httpVersion === '1.0') {
      // the URL the app parses needs a host: the address the connection came in on (an IPv6 bind's is bracketed)
      const local = request.socket.localAddress ?? '127.0.0.1';
      request.headers.host = `${isIP(local) === 6 ? `[${local}]` : local}:${request.socket.localPort}`;
      return listener(request, response);
    }
    answerOutsideApp(request, response, shapeFor, new ApiError(400, 'invalid_request', 'the Host header is required (HTTP/1.1 requests must send one)', { field: 'Host' }));
  };
}

/**
 * `apiError` as the whole answer to a request the app never sees, in the shape of its path's surface; the
 * connection closes after it. A body sent with the request is read and dropped, unheld, so the answer is not lost to
 * a reset.
 */
export function answerOutsideApp(request: IncomingMessage, response: ServerResponse, shapeFor: (path: string) => ErrorShape, apiError: ApiError): void {
  const path = (request.url ?? '/').split('?')[0]!;
  const body = JSON.stringify(shapeFor(path)({ status: apiError.status, code: apiError.code, message: apiError.message, field: apiError.field, headers: apiError.headers }));
  request.resume();
  response
    .writeHead(apiError.status, { ...apiError.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
    .end(body);
}
