// Requests that Node's HTTP parser rejects before any route sees them (headers over the size limit, a
// malformed request line, a request too slow to arrive) still get the service's one JSON error shape.
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.ts';

function errorFor(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'headers_too_large', 'request headers are over the size limit (16 KiB)');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'request_timeout', 'the request did not arrive in time');
  return new ApiError(400, 'invalid_request', 'malformed HTTP request');
}

export function answerParserErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const apiError = errorFor(error.code);
    const body = JSON.stringify(apiError.toBody());
    socket.end(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
