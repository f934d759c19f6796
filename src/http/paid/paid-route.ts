// One paid call from a route of the table (operations.ts) to its HTTP answer, for every surface: the body read
// as the route's translator prepares it, the payment gate decides, the answer carries what was charged and the
// tokens used, and a call that asked for server-sent events gets them as the model produces its answer.
//
// A stream opens only once the gate runs the work, that is after the proof is verified (and, for a call
// that settles first, settled): every refusal before that (400, 402, 409) is an ordinary JSON answer. The
// gate then settles when the work resolves, as for any call; its outcome is the stream's last event (the
// receipt, or why nothing was charged). A client that leaves aborts the work, which the gate treats as a
// failed work: nothing is charged, or, if the payment was settled first, the same proof runs it again.
// Under `upto` the charge is the streamed answer's metered cost, known only after the last token: the stream's
// headers then carry no amount, and its last event's receipt says what was charged.
import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../../config/load.ts';
import type { EndpointContext, EventStream, PreparedCall, StreamReceipt, WorkOutput } from '../../api/endpoint.ts';
import type { PaymentGate } from '../../payments/gate.ts';
import type { PaidCall, PaymentOutcome, WorkPayment } from '../../payments/outcome.ts';
import { paidCall, refundCall, type RequestFacts } from '../../payments/paid-call.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import type { ProviderRegistry } from '../../providers/registry.ts';
import type { MediaStore } from '../../media/media-store.ts';
import type { Ledger } from '../../store/ledger.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import type { HttpMetrics } from '../metrics.ts';
import { formatUsdc } from '../../pricing/usdc.ts';
import { caip2Of, receiptAmount } from '../../x402/model.ts';
import { requestOrigin } from '../origin.ts';
import { signInChallenge, SIGN_IN_WITH_X_HEADER, type SignInChallenge } from '../../x402/sign-in-with-x.ts';
import { requestHash } from '../../lib/canonical-json.ts';
import { paidResultForSignIn } from '../../payments/sign-in-replay.ts';
import { errorAnswer, type ErrorAnswer } from '../render-error.ts';
import { jsonResponse, plainResponse, withNotes } from '../response-headers.ts';
import { jsonSchema } from '../discovery/openapi-schema.ts';
import { readJsonBody } from '../read-json.ts';
import { carriesPayment, HTTP_NAMES, outcomeError, paymentFromHeaders, receiptHeaders, type HeaderReader, type HttpPaymentAnswers, type PaymentAnswer } from './payment-edge.ts';
import { SURFACES, type OperationRoute, type PaidOperation, type Surface } from './operations.ts';
import { routeExtensions } from './route-extensions.ts';
import { streamDeadlineSignal } from '../../api/stream-deadline.ts';
import { currentCallTrace, type Tracing } from '../../tracing/paid-call-trace.ts';
import { countedWork, traced, traceOutcome } from './observed-call.ts';
import { webEventSink, type EventSink } from './event-sinks.ts';

export interface PaidRouteDeps {
  config: Config;
  gate: PaymentGate;
  /** renders the gate's outcomes as HTTP answers (and holds the serialised 402s) */
  answers: HttpPaymentAnswers;
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  media: MediaStore;
  metrics: HttpMetrics;
  /** traces of the paid calls (tracing/), when the config turns tracing on */
  tracing?: Tracing | undefined;
  /** where a stream's failure is logged, through the one error path (render-error.ts) */
  log: Logger;
  /** where a signed-in payer's kept result is found (sign-in-with-x) */
  ledger: Ledger;
}

/** A route of the table with what is fixed for it worked out once; what depends on the request comes per call. */
export interface PaidRoute {
  operation: PaidOperation;
  route: OperationRoute;
  surface: Surface;
  /** JSON Schema of the body's fields (the v1 402's outputSchema) */
  bodyFields: Record<string, unknown>;
  /** the route's x402 v2 `extensions` for an origin (route-extensions.ts) */
  extensions: (origin: string) => Record<string, unknown>;
  /** a paid 200 as the route answers it, when it is not the JSON body */
  deliver?: ((body: unknown, headers: Record<string, string>) => Promise<Response> | Response) | undefined;
}

export function paidRoute(operation: PaidOperation, route: OperationRoute, deps: Pick<PaidRouteDeps, 'catalog' | 'media'>): PaidRoute {
  return {
    operation,
    route,
    surface: SURFACES[route.surface],
    bodyFields: (jsonSchema(route.requestSchema).properties as Record<string, unknown>) ?? {},
    extensions: routeExtensions(operation, route, deps.catalog),
    deliver: route.deliver?.(deps.media),
  };
}

/** Where a route's media ids are served, and what prepare() needs of the service. */
export function endpointContext(c: Context, deps: PaidRouteDeps): EndpointContext {
  return endpointContextAt(requestOrigin(c, deps.config), deps);
}

export function endpointContextAt(origin: string, deps: Pick<PaidRouteDeps, 'catalog' | 'providers' | 'media'>): EndpointContext {
  return { catalog: deps.catalog, providers: deps.providers, media: deps.media, mediaUrl: (id) => `${origin}/media/${id}` };
}

/** What was charged and the tokens used, on every paid 200 (amount in atomic units and in USDC). */
export function chargeHeaders(amount: bigint, usage: Partial<TokenUsage> | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'X-Payment-Amount': amount.toString(), 'X-Payment-Amount-USDC': formatUsdc(amount) };
  if (usage?.promptTokens !== undefined) headers['X-Usage-Prompt-Tokens'] = String(usage.promptTokens);
  if (usage?.completionTokens !== undefined) headers['X-Usage-Completion-Tokens'] = String(usage.completionTokens);
  if (usage?.totalTokens !== undefined) headers['X-Usage-Total-Tokens'] = String(usage.totalTokens);
  return headers;
}

export const CHARGE_HEADERS = [
  'X-Payment-Amount',
  'X-Payment-Amount-USDC',
  'X-Usage-Prompt-Tokens',
  'X-Usage-Completion-Tokens',
  'X-Usage-Total-Tokens',
] as const;

/** POST on a paid route: the body, a signed-in payer's kept result, or the paid call. */
export async function answerPaidRoute(c: Context, deps: PaidRouteDeps, paid: PaidRoute): Promise<Response> {
  const limit = paid.route.agentChat ? deps.config.chatBodyLimitBytes : deps.config.bodyLimitBytes;
  const body = await readJsonBody(c, limit, paid.surface.plainTextBodies);
  const prepared = paid.route.prepare(body, endpointContext(c, deps));
  const header = (name: string) => c.req.header(name);
  const signIn = header(SIGN_IN_WITH_X_HEADER);
  if (signIn !== undefined && !carriesPayment(header)) {
    // pay once, fetch again by signing in: the payer's own settled result for this request, no new charge
    const origin = requestOrigin(c, deps.config);
    const replay = await paidResultForSignIn({ header: signIn, origin, networks: deps.gate.enabledNetworks, ledger: deps.ledger, requestHash: requestHash(paid.route.path, body) });
    if (replay) return jsonResponse(c, replay.body, replay.status, { 'Cache-Control': 'private, no-store' });
  }
  const response = await traced(
    deps,
    { capability: paid.operation.capability, route: paid.route.path, prepared, paid: carriesPayment(header) },
    () => respondPaid(c, deps, paid, body, prepared),
    (response) => response.status,
  );
  // what the request asked that the call ignored or lowered, on every answer to it (the 402 included)
  return withNotes(response, prepared.notes);
}

async function respondPaid(c: Context, deps: PaidRouteDeps, paid: PaidRoute, body: unknown, prepared: PreparedCall): Promise<Response> {
  const work = countedWork(deps, paid.operation.capability, prepared.model.id);
  const request = { header: (name: string) => c.req.header(name), origin: requestOrigin(c, deps.config) };
  const http = await httpPaidCall(deps, paid, request, body, prepared, () => work.count(() => prepared.run()));
  if (prepared.events) return respondStreamed(c, deps, paid, prepared.events, http, work.count);
  const answer = await answerWhole(deps, paid, http, work.usage);
  if (answer.delivered && paid.deliver) return paid.deliver(answer.body, answer.headers);
  return answerJson(c, answer);
}

/**
 * A call answered in one piece (not a stream): the gate's outcome as the route answers it, a delivered result with
 * what was charged and the tokens used (`usage`: what its work reported). Shared with the paid lane (paid-lane.ts).
 */
export async function answerWhole(deps: PaidRouteDeps, paid: PaidRoute, http: HttpPaidCall, usage: () => Partial<TokenUsage> | undefined): Promise<PaymentAnswer & { delivered: boolean }> {
  const outcome = await deps.gate.process(http.call);
  traceOutcome(outcome);
  if (outcome.kind !== 'delivered') return { ...deps.answers.render(outcome, http.call, answersOf(paid), http.signIn), delivered: false };
  const headers = { ...receiptHeaders(outcome.receipt, outcome.wires), ...chargeHeaders(outcome.receipt.amount!, usage() ?? paid.route.usageOf?.(outcome.body)) };
  return { status: outcome.status, body: outcome.body, headers, delivered: true };
}

/** What the gate needs of a request to a paid route: its headers and the origin it was made to. */
export interface PaidRequest {
  header: HeaderReader;
  origin: string;
}

/** A request to a paid route as the gate's call, and the sign-in challenge its 402 carries when it is unpaid. */
export interface HttpPaidCall {
  call: PaidCall;
  signIn?: SignInChallenge | undefined;
}

/** The HTTP facts of a request to a paid route, as the core's call builder takes them. */
async function requestFacts(deps: PaidRouteDeps, paid: PaidRoute, request: PaidRequest, body: unknown): Promise<{ facts: RequestFacts; signIn?: SignInChallenge }> {
  const payment = carriesPayment(request.header) ? paymentFromHeaders(request.header) : undefined;
  const resource = `${request.origin}${paid.route.path}`;
  // the route's sign-in-with-x challenge for an unpaid call's 402 (each 402 gets a fresh nonce)
  const signIn = payment === undefined ? await signInChallenge(request.origin, resource, deps.gate.enabledNetworks) : undefined;
  const { service } = deps.config;
  const facts: RequestFacts = {
    payment,
    network: request.header('X-Network'),
    names: HTTP_NAMES,
    resource,
    listing: { serviceName: service.name, tags: service.tags, extensions: paid.extensions(request.origin) },
    binding: { route: paid.route.path, body },
  };
  return { facts, ...(signIn ? { signIn } : {}) };
}

/** The gate's call for one request to a paid route; `work` runs only once its payment is verified. */
export async function httpPaidCall(deps: PaidRouteDeps, paid: PaidRoute, request: PaidRequest, body: unknown, prepared: PreparedCall, work: PaidCall['work']): Promise<HttpPaidCall> {
  const { facts, signIn } = await requestFacts(deps, paid, request, body);
  const streamSeconds = prepared.events ? Math.ceil(deps.providers.settings(prepared.model).timeoutMs / 1000) : undefined;
  const call = paidCall(deps.config, paid.operation, facts, { model: prepared.model.id, amount: prepared.amount, streamSeconds, payer: prepared.payer, paidBy: prepared.paidBy, work });
  return { call, signIn };
}

/**
 * GET on a paid URL: where the official x402 batch-settlement client asks for a cooperative refund of its payment
 * channel (`refundChannel(url)`). Its probe (no payment) gets the route's 402 with the channel offer; its second GET
 * carries the refund voucher. No work runs.
 */
export async function answerRefund(c: Context, deps: PaidRouteDeps, paid: PaidRoute): Promise<Response> {
  const request = { header: (name: string) => c.req.header(name), origin: requestOrigin(c, deps.config) };
  const { facts, signIn } = await requestFacts(deps, paid, request, undefined);
  const call = refundCall(paid.operation, facts);
  const outcome = await deps.gate.process(call);
  return answerJson(c, deps.answers.render(outcome, call, answersOf(paid), signIn));
}

/** What the route's answers other than its result are made of. */
function answersOf(paid: PaidRoute) {
  return { bodyFields: paid.bodyFields, errorShape: paid.surface.errorShape };
}

/** An answer's body as sent: a 402's document comes serialised; a result, whatever its type, and a refusal are JSON. */
export function answerText(answer: PaymentAnswer & { delivered?: boolean }): string {
  return typeof answer.body === 'string' && !answer.delivered ? answer.body : JSON.stringify(answer.body);
}

/** An answer whose headers stay a plain record to the socket (plainResponse). */
function answerJson(c: Context, answer: PaymentAnswer & { delivered?: boolean }): Response {
  return plainResponse(c, answerText(answer), answer.status, { ...answer.headers, 'Content-Type': 'application/json' });
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
};

/** A streamed call's first answer: JSON when no work ran (a refusal), else the stream's head, its events in the sink. */
export type StreamHead = { kind: 'json'; answer: PaymentAnswer } | { kind: 'events'; headers: Record<string, string> };

async function respondStreamed(
  c: Context,
  deps: PaidRouteDeps,
  paid: PaidRoute,
  events: EventStream,
  http: HttpPaidCall,
  counted: (work: () => Promise<WorkOutput>) => Promise<WorkOutput>,
): Promise<Response> {
  const sink = webEventSink();
  const head = await openStream(deps, paid, events, http, counted, sink, (error) => errorAnswer(error, c, deps.log));
  if (head.kind === 'json') return answerJson(c, head.answer);
  return new Response(sink.body, { status: 200, headers: head.headers });
}

/**
 * A streamed call through the gate, its events written to `sink`; `answerError` decides what an error once the
 * stream is open becomes (render-error.ts), told in the stream's last event. Shared with the paid lane.
 */
export async function openStream(
  deps: PaidRouteDeps,
  paid: PaidRoute,
  events: EventStream,
  http: HttpPaidCall,
  counted: (work: () => Promise<WorkOutput>) => Promise<WorkOutput>,
  sink: EventSink,
  answerError: (error: unknown) => ErrorAnswer,
): Promise<StreamHead> {
  const close = () => {
    sink.close();
    currentCallTrace()?.streamClosed();
  };
  let started!: (payment: WorkPayment) => void;
  const workStarted = new Promise<WorkPayment>((resolve) => (started = resolve));
  const answered = deps.gate.process({
    ...http.call,
    work: (payment) => {
      started(payment);
      // under upto a short payment bounds the stream: it ends there as if its token limit were reached
      const signal = payment.deadline === undefined ? sink.signal : AbortSignal.any([sink.signal, streamDeadlineSignal(payment.deadline)]);
      return counted(() => events.run((text) => sink.write(text), signal));
    },
  });
  const first = await Promise.race([workStarted, answered.then(() => 'answered' as const, () => 'answered' as const)]);

  if (first === 'answered') {
    // no work ran: a refusal (402, 409, an error) answered as usual, or a kept result replayed as a stream
    const outcome = await answered;
    traceOutcome(outcome);
    if (outcome.kind !== 'delivered') return { kind: 'json', answer: deps.answers.render(outcome, http.call, answersOf(paid), http.signIn) };
    const charged = outcome.receipt.amount!;
    sink.write(events.end(outcome.body, streamReceipt(outcome), true));
    close();
    return { kind: 'events', headers: { ...SSE_HEADERS, ...receiptHeaders(outcome.receipt, outcome.wires), ...chargeHeaders(charged, paid.route.usageOf?.(outcome.body)) } };
  }

  // the amount goes out with the first byte when it is already known (exact); under upto only the last event has it
  const headers = { ...SSE_HEADERS, ...(first.charge === undefined ? {} : chargeHeaders(first.charge, undefined)) };
  answered
    .then(
      (outcome) => {
        traceOutcome(outcome, sink.signal.aborted);
        if (outcome.kind === 'delivered') sink.write(events.end(outcome.body, streamReceipt(outcome), false));
        else {
          const { status, code, message } = outcomeError(outcome, http.call);
          sink.write(events.failure({ status, code, message }));
        }
      },
      (error: unknown) => {
        // decided and logged as on every route; the stream's last event says it in the surface's shape
        const { status, code, message } = answerError(error);
        sink.write(events.failure({ status, code, message }));
      },
    )
    .finally(close);
  return { kind: 'events', headers };
}

/** The settlement receipt a stream's last event carries: the fields PAYMENT-RESPONSE states, the scheme's own included. */
function streamReceipt(outcome: Extract<PaymentOutcome, { kind: 'delivered' }>): StreamReceipt {
  const { receipt } = outcome;
  // the network spelled as the receipt header of the payment's wire spells it (v2: the CAIP-2 id, v1: the name)
  const network = outcome.wires.includes(2) ? caip2Of(receipt.network) : receipt.network;
  const stated: StreamReceipt = { success: true, transaction: receipt.transaction, network, payer: receipt.payer, amount: receiptAmount(receipt) ?? '' };
  return receipt.extra ? { ...stated, extra: receipt.extra } : stated;
}
