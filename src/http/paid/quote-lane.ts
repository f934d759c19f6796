// The unpaid quote, answered on node:http before the app. An agent's first call to a paid route carries no
// payment, so this 402 is the service's most frequent answer, and Hono's web Request/Response around it cost
// as much as the answer itself (bench/unpaid-402.ts measures it beside the official middleware). The lane
// answers what the app would, with the app's own parts: the same route, gate, response headers, request
// log line and metrics. It takes only the plainest requests: POST to a paid route's path with no query,
// no payment or sign-in header, no Expect, a JSON Content-Type and a Content-Length within the body limit.
// Everything else goes to the app untouched. A request the lane read but does not answer (a body that does
// not parse or validate) goes to the app with its body kept as `rawBody`, which @hono/node-server reads
// instead of the spent stream: the app then renders the error as it always does.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.ts';
import { SIGN_IN_WITH_X_HEADER } from '../../x402/sign-in-with-x.ts';
import { originOf } from '../origin.ts';
import { endpointContextAt, httpPaidCall, paidRoute, type PaidRoute, type PaidRouteDeps } from './paid-route.ts';
import { httpRoutes, type PaidOperation } from './operations.ts';
import { PAYMENT_HEADERS } from './payment-edge.ts';
import { isJsonType, parseJsonBody, readIncoming } from '../read-json.ts';
import type { AnswerFrame } from '../answer-frame.ts';
import { writeTrustedHead } from '../trusted-head.ts';

export interface QuoteLaneDeps extends PaidRouteDeps {
  log: Logger;
  operations: readonly PaidOperation[];
  /** the app's own answer frame: its request id, CORS headers, metrics and log line */
  frame: AnswerFrame;
}

/** Headers that send a request to the app: a proof or a sign-in needs the whole paid path. */
const APP_HEADERS = [...PAYMENT_HEADERS, SIGN_IN_WITH_X_HEADER, 'Expect', 'Transfer-Encoding'].map((name) => name.toLowerCase());

/** `app` with the quote lane in front of it. */
export function withQuoteLane(app: RequestListener, deps: QuoteLaneDeps): RequestListener {
  const routes = new Map(httpRoutes(deps.operations).map(({ operation, route }) => [route.path, paidRoute(operation, route, deps)]));
  const limit = deps.config.bodyLimitBytes;

  const quote = async (request: IncomingMessage, response: ServerResponse, path: string, paid: PaidRoute): Promise<void> => {
    const started = performance.now();
    let bytes: Buffer;
    try {
      bytes = await readIncoming(request, limit, () => new ApiError(413, 'payload_too_large', 'over the limit'));
    } catch {
      app(request, response); // the client left mid-body, or sent more than it declared: the app's answer
      return;
    }
    (request as IncomingMessage & { rawBody?: Buffer }).rawBody = bytes;
    const header = (name: string) => headerOf(request, name);
    let answer;
    try {
      const origin = originOf({ header, socket: request.socket, url: `http://${request.headers.host}${path}` }, deps.config);
      const body = parseJsonBody(bytes.toString('utf8'));
      const prepared = paid.route.prepare(body, endpointContextAt(origin, deps));
      const { call, signIn } = await httpPaidCall(deps, paid, { header, origin }, body, prepared, unpaid);
      const outcome = await deps.gate.process(call);
      answer = outcome.kind === 'payment_required' ? deps.answers.render(outcome, call, { bodyFields: paid.bodyFields, errorShape: paid.surface.errorShape }, signIn) : undefined;
    } catch {
      answer = undefined;
    }
    if (answer?.status !== 402 || typeof answer.body !== 'string') {
      app(request, response);
      return;
    }
    const frame = deps.frame.open(header('X-Request-Id'));
    // every value is a checked request id, base64 or a constant (see trusted-head.ts)
    writeTrustedHead(response, 402, [
      ...Object.entries(frame.headers),
      ...Object.entries(answer.headers),
      ['Content-Type', 'application/json'],
      ['Content-Length', String(Buffer.byteLength(answer.body))],
    ]);
    response.end(answer.body);
    deps.frame.close({ requestId: frame.requestId, method: 'POST', route: path, path, status: 402, started });
  };

  return (request, response) => {
    const paid = request.method === 'POST' ? routes.get(request.url ?? '') : undefined;
    if (!paid || !isPlain(request, limit)) return app(request, response);
    quote(request, response, request.url!, paid).catch((error: unknown) => {
      // not reached: every step that can fail hands the request to the app; never an unhandled rejection
      deps.log.error({ err: error }, 'quote lane failed');
      response.destroy();
    });
  };
}

function isPlain(request: IncomingMessage, limit: number): boolean {
  const { headers } = request;
  for (const name of APP_HEADERS) if (headers[name] !== undefined) return false;
  const length = headers['content-length'];
  return length !== undefined && Number(length) <= limit && isJsonType(headers['content-type'] ?? '');
}

/** A header as the web Headers of the app's request gives it: repeated ones joined with ", ". */
function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The work of a call without payment: the gate answers 402 before any work could run. */
function unpaid(): never {
  throw new Error('an unpaid call runs no work');
}
