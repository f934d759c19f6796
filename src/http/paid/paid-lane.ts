// A paid route's calls, paid or not, answered on node:http before the app. Hono's web Request and Response around a
// call cost as much as the unpaid 402 itself (bench/unpaid-402.ts measures it beside the official middleware) and a
// fifth of what the gateway adds to a chat completion (bench/upstream-overhead.ts). The lane answers what the app
// would, with the app's own parts: the same route, gate, answers, trace and metrics (paid-route.ts: answerWhole for
// a call answered in one piece, openStream for a stream, its events written to the socket), response headers and
// request log line (answer-frame.ts). It takes only the plainest requests: POST to a paid route's path with no
// query, no sign-in header, no Expect or Transfer-Encoding, a JSON Content-Type and a Content-Length within the
// route's body limit, on a route that answers in JSON or events (speech delivers audio: the app's).
// An unpaid call asked before, in the same bytes, gets its kept 402 (unpaid-quotes.ts), not parsed and priced again.
// Everything else goes to the app untouched. A request the lane read but hands over before its gate has the call
// (a body that does not parse or validate, a payment-identifier the edge refuses) goes to the app with its body kept
// as `rawBody`, which @hono/node-server reads instead of the spent stream: the app then answers it as it always
// does. Once the gate has the call, the lane answers whatever comes, an error through the one error path
// (render-error.ts) in the route's shape.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.ts';
import { SIGN_IN_WITH_X_HEADER } from '../../x402/sign-in-with-x.ts';
import type { PreparedCall } from '../../api/endpoint.ts';
import { originOf } from '../origin.ts';
import { answerText, answerWhole, endpointContextAt, httpPaidCall, openStream, paidRoute, type HttpPaidCall, type PaidRoute, type PaidRouteDeps, type StreamHead } from './paid-route.ts';
import { httpRoutes, type PaidOperation } from './operations.ts';
import { carriesPayment, type HeaderReader, type PaymentAnswer } from './payment-edge.ts';
import { countedWork, traced } from './observed-call.ts';
import { isJsonType, parseJsonBody, readIncoming } from '../read-json.ts';
import { errorAnswerFor, incomingClosed } from '../render-error.ts';
import type { AnswerFrame } from '../answer-frame.ts';
import { writeTrustedHead } from '../trusted-head.ts';
import { lowerCaseName } from '../header-name.ts';
import { socketEventSink } from './event-sinks.ts';
import { UnpaidQuotes } from './unpaid-quotes.ts';
import { TurnWrites } from '../turn-writes.ts';

export interface PaidLaneDeps extends PaidRouteDeps {
  log: Logger;
  operations: readonly PaidOperation[];
  /** the app's own answer frame: its request id, CORS headers, metrics and log line */
  frame: AnswerFrame;
}

/** Headers that send a request to the app: a sign-in replays a kept result, the others are framing. */
const APP_HEADERS = [SIGN_IN_WITH_X_HEADER, 'Expect', 'Transfer-Encoding'].map((name) => name.toLowerCase());

/** A call the lane has read and the gate may now take. */
interface LaneCall {
  prepared: PreparedCall;
  http: HttpPaidCall;
  work: ReturnType<typeof countedWork>;
}

/** `app` with the paid lane in front of it. */
export function withPaidLane(app: RequestListener, deps: PaidLaneDeps): RequestListener {
  const routes = new Map(
    httpRoutes(deps.operations)
      .filter(({ route }) => !route.deliver)
      .map(({ operation, route }) => [route.path, paidRoute(operation, route, deps)]),
  );
  const limitOf = (paid: PaidRoute) => (paid.route.agentChat ? deps.config.chatBodyLimitBytes : deps.config.bodyLimitBytes);

  const quotes = new UnpaidQuotes((network) => deps.gate.offerState(network));

  /** The call a request makes, or undefined when the app is to answer it. */
  const callOf = async (paid: PaidRoute, header: HeaderReader, bytes: Buffer, origin: string): Promise<LaneCall | undefined> => {
    try {
      const body = parseJsonBody(bytes.toString('utf8'));
      const prepared = paid.route.prepare(body, endpointContextAt(origin, deps));
      const work = countedWork(deps, paid.operation.capability, prepared.model.id);
      const http = await httpPaidCall(deps, paid, { header, origin }, body, prepared, () => work.count(() => prepared.run()));
      return { prepared, http, work };
    } catch {
      return undefined; // the app renders what was wrong
    }
  };

  const answer = async (request: IncomingMessage, response: ServerResponse, path: string, paid: PaidRoute): Promise<void> => {
    const started = performance.now();
    let bytes: Buffer;
    try {
      bytes = await readIncoming(request, limitOf(paid), () => new ApiError(413, 'payload_too_large', 'over the limit'));
    } catch {
      app(request, response); // the client left mid-body, or sent more than it declared: the app's answer
      return;
    }
    (request as IncomingMessage & { rawBody?: Buffer }).rawBody = bytes;
    const header: HeaderReader = (name) => headerOf(request, name);
    const origin = originOf({ header, socket: request.socket, url: `http://${request.headers.host}${path}` }, deps.config);
    // an unpaid call asked before gets the 402 it got (unpaid-quotes.ts), its fresh values made anew
    const withPayment = carriesPayment(header);
    const unpaid = withPayment ? undefined : quotes.ask(origin, path, header('X-Network'), bytes);
    const kept = unpaid && quotes.answer(unpaid);
    if (kept) {
      writeAnswer(response, path, started, deps.frame.open(header('X-Request-Id')), kept, true);
      return;
    }
    const call = await callOf(paid, header, bytes, origin);
    if (!call) {
      app(request, response);
      return;
    }
    const frame = deps.frame.open(header('X-Request-Id'));
    const { prepared, http, work } = call;
    // a stream's client may leave once its request is whole: its socket's closing before the answer's end says so
    const clientLeft = () => incomingClosed(request) || (response.destroyed && !response.writableFinished);
    const answerError = (error: unknown) => errorAnswerFor(error, { reqId: frame.requestId, left: clientLeft() }, deps.log);
    const notes = prepared.notes?.headers();
    let answered: PaymentAnswer & { delivered?: boolean };
    try {
      const traceOf = { capability: paid.operation.capability, route: path, prepared, paid: withPayment };
      if (prepared.events) {
        const sink = socketEventSink(response);
        const head = await traced(deps, traceOf, () => openStream(deps, paid, prepared.events!, http, work.count, sink, answerError), statusOfHead);
        if (head.kind === 'events') {
          // every value is a checked request id, digits, a header-safe field list or a constant (see trusted-head.ts)
          sink.open([...Object.entries(frame.headers), ...Object.entries(head.headers), ...Object.entries(notes ?? {})]);
          deps.frame.close({ requestId: frame.requestId, method: 'POST', route: path, path, status: 200, started });
          return;
        }
        answered = head.answer;
      } else {
        answered = await traced(deps, traceOf, () => answerWhole(deps, paid, http, work.usage), (a) => a.status);
      }
      // what the request asked that the call ignored or lowered, as the app's route adds it (withNotes)
      answered = { ...answered, headers: { ...answered.headers, ...notes } };
    } catch (error) {
      const failed = answerError(error);
      answered = { status: failed.status, body: paid.surface.errorShape(failed), headers: failed.headers };
    }
    if (unpaid) quotes.keep(unpaid, answered);
    writeAnswer(response, path, started, frame, answered, unpaid !== undefined && answered.status === 402);
  };

  const turnWrites = new TurnWrites();

  /**
   * A call's answer in one piece, told to the frame. An unpaid call's 402 (`probe`) is written with the turn's others
   * (turn-writes.ts): probes come many at a time, and each is made within the turn its request was read in. Any
   * other answer is written at once: its call waited on other work (the chain, the ledger, a model), and the turn
   * it ends in may hold a paid call's heavier steps (a signature checked, a body rendered) it should not wait for.
   */
  const writeAnswer = (response: ServerResponse, path: string, started: number, frame: ReturnType<AnswerFrame['open']>, answered: PaymentAnswer, probe: boolean) => {
    if (!probe) {
      writeNow(response, path, started, frame, answered);
      return;
    }
    turnWrites.queue(
      () => writeNow(response, path, started, frame, answered),
      (error) => {
        deps.log.error({ err: error }, 'paid lane answer failed');
        response.destroy();
      },
    );
  };

  const writeNow = (response: ServerResponse, path: string, started: number, frame: ReturnType<AnswerFrame['open']>, answered: PaymentAnswer) => {
    const text = answerText(answered);
    // every value is a checked request id, base64, digits, a header-safe field list or a constant (see trusted-head.ts)
    writeTrustedHead(response, answered.status, [
      ...Object.entries(frame.headers),
      ...Object.entries(answered.headers),
      ['Content-Type', 'application/json'],
      ['Content-Length', String(Buffer.byteLength(text))],
    ]);
    response.end(text);
    deps.frame.close({ requestId: frame.requestId, method: 'POST', route: path, path, status: answered.status, started });
  };

  return (request, response) => {
    const paid = request.method === 'POST' ? routes.get(request.url ?? '') : undefined;
    if (!paid || !isPlain(request, limitOf(paid))) return app(request, response);
    answer(request, response, request.url!, paid).catch((error: unknown) => {
      // not reached: every step that can fail hands the request to the app or is answered; never an unhandled rejection
      deps.log.error({ err: error }, 'paid lane failed');
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
  const value = request.headers[lowerCaseName(name)];
  return Array.isArray(value) ? value.join(', ') : value;
}

const statusOfHead = (head: StreamHead) => (head.kind === 'json' ? head.answer.status : 200);
