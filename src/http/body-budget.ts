// A ceiling on the request bodies held at once, across all requests (bodyMemoryLimitBytes). A body is held whole
// until it is parsed, and may be as large as its route allows (32 MiB on the agent chat surfaces): without a
// ceiling, a client that opens many connections and sends such bodies slowly makes the process hold them all,
// until it runs out of memory and every call in flight, paid ones included, is lost with it. Each request with a
// large body counts its declared Content-Length (at most the largest body any route takes; a chunked body, whose
// size is not declared, counts as that largest) from its arrival until its body has been read or its answer sent.
// One that would pass the ceiling is answered 503 with Retry-After at once, in its surface's error shape, its body
// unread. Small bodies are not counted: one costs less than the connection that carries it.
import type { RequestListener } from 'node:http';
import { ApiError } from '../errors.ts';
import { answerOutsideApp } from './parser-errors.ts';
import type { ErrorShape } from './render-error.ts';

/** Bodies up to this size are not counted. */
export const UNCOUNTED_BODY_BYTES = 64 * 1024;

export interface BodyBudget {
  /** the most body bytes held at once */
  limitBytes: number;
  /** the largest body any route takes */
  largestBodyBytes: number;
}

export function withBodyBudget(listener: RequestListener, { limitBytes, largestBodyBytes }: BodyBudget, shapeFor: (path: string) => ErrorShape): RequestListener {
  let held = 0;
  return (request, response) => {
    const declared = request.headers['content-length'];
    const size = Math.min(declared !== undefined ? Number(declared) : request.headers['transfer-encoding'] !== undefined ? largestBodyBytes : 0, largestBodyBytes);
    if (!(size > UNCOUNTED_BODY_BYTES)) return listener(request, response);
    if (held + size > limitBytes) {
      const error = new ApiError(503, 'server_busy', 'the service is reading as many large request bodies as it holds at once; nothing was charged, retry shortly', {
        headers: { 'Retry-After': '1' },
      });
      answerOutsideApp(request, response, shapeFor, error);
      return;
    }
    held += size;
    let counted = true;
    const release = () => {
      if (counted) held -= size;
      counted = false;
    };
    request.once('end', release);
    response.once('close', release);
    listener(request, response);
  };
}
