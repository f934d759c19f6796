// What every answer carries and who is told of it, whichever path answers the request: the app (through the
// middlewares frameMiddlewares() lists) and the paid lane in front of it (paid-lane.ts, through the same
// frame on node:http). One list, so the two cannot drift: a request id (X-Request-Id), the CORS headers,
// then, once answered, the request metrics and the request log line.
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import { corsHeaders, openCors, type CorsOptions } from './cors.ts';
import type { HttpMetrics } from './metrics.ts';
import { requestId, requestIdFrom } from './request-id.ts';
import { logRequest } from './request-log.ts';

export interface AnswerFrame {
  /** the id of a request that sent `idHeader` as its X-Request-Id, and the headers every answer to it carries */
  open(idHeader: string | undefined): { requestId: string; headers: Record<string, string> };
  /** a request answered: `route` is the matched pattern (never the raw path: one metrics series per route) */
  close(answered: { requestId: string; method: string; route: string; path: string; status: number; started: number }): void;
}

export interface FrameDeps {
  log: Logger;
  metrics: HttpMetrics;
  cors: CorsOptions;
}

export function answerFrame({ log, metrics, cors }: FrameDeps): AnswerFrame {
  const always = corsHeaders(cors);
  return {
    open(idHeader) {
      const id = requestIdFrom(idHeader);
      return { requestId: id, headers: { 'X-Request-Id': id, ...always } };
    },
    close({ requestId: reqId, method, route, path, status, started }) {
      metrics.observeRequest(method, route, status, started);
      logRequest(log, { reqId, method, path, status, started });
    },
  };
}

/** The frame as the app's outermost middlewares: told of the answer last, after the error handler made it. */
export function frameMiddlewares(frame: AnswerFrame, cors: CorsOptions): MiddlewareHandler[] {
  const observed: MiddlewareHandler = async (c, next) => {
    const started = performance.now();
    await next();
    frame.close({ requestId: c.get('requestId'), method: c.req.method, route: routePath(c, -1), path: c.req.path, status: c.res.status, started });
  };
  return [observed, requestId(), openCors(cors)];
}
