// One paid call from a prepared endpoint call to its HTTP answer, for every surface (the spec's routes and
// the OpenAI-compatible ones): the payment gate decides, the answer carries what was charged and the tokens
// used, and a call that asked for server-sent events gets them as the model produces its answer.
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
import type { Config } from '../config/load.ts';
import type { Capability } from '../config/schema.ts';
import type { EndpointContext, EventStream, PreparedCall, StreamFailure, StreamReceipt, WorkOutput } from '../api/endpoint.ts';
import type { PaymentGate } from '../payments/gate.ts';
import type { PaidCall, PaymentOutcome, WorkPayment } from '../payments/outcome.ts';
import type { ModelCatalog } from '../providers/catalog.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { MediaStore } from '../media/media-store.ts';
import type { TokenUsage } from '../pricing/token-usage.ts';
import type { HttpMetrics } from './metrics.ts';
import { formatUsdc } from '../pricing/usdc.ts';
import { requestOrigin } from './origin.ts';
import { signInChallenge } from '../x402/sign-in-with-x.ts';
import { caip2Of } from '../x402/model.ts';
import { requestHash } from '../lib/canonical-json.ts';
import { settlesFirst } from '../payments/settle-first.ts';
import { errorAnswer } from './render-error.ts';
import { plainResponse } from './response-headers.ts';
import { carriesPayment, HTTP_NAMES, paymentFromHeaders, receiptHeaders, refusalError, type HeaderReader, type HttpPaymentAnswers, type PaymentAnswer, type PaymentRequiredContext } from './payment-edge.ts';
import { streamDeadlineSignal } from '../api/stream-deadline.ts';
import { currentCallTrace, type Tracing } from '../tracing/paid-call-trace.ts';

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
}

export interface PaidRoute {
  /** the route's path: names the resource paid for and identifies the request body */
  path: string;
  capability: Capability;
  description: string;
  bodyFields: Record<string, unknown>;
  /** the route's x402 v2 `extensions` for an origin (http/route-extensions.ts) */
  extensions?: ((origin: string) => Record<string, unknown>) | undefined;
  body: unknown;
  prepared: PreparedCall;
  /** charged the result's metered cost under x402 `upto` where a rail offers it */
  metered?: boolean | undefined;
  /** a paid 200 body as the route answers it (default: JSON) */
  deliver?: (body: unknown, headers: Record<string, string>) => Promise<Response> | Response;
  /** tokens a kept 200 body reports, for the headers of a replay */
  usageOf?: ((body: unknown) => Partial<TokenUsage> | undefined) | undefined;
}

/** Where a route's media ids are served, and what prepare() needs of the service. */
export function endpointContext(c: Context, deps: PaidRouteDeps): EndpointContext {
  return endpointContextAt(requestOrigin(c, deps.config), deps);
}

export function endpointContextAt(origin: string, deps: PaidRouteDeps): EndpointContext {
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

export async function respondPaid(c: Context, deps: PaidRouteDeps, route: PaidRoute): Promise<Response> {
  // a span per paid call (one that carries a payment), ended when it is answered or its stream ends
  if (!deps.tracing || !carriesPayment((name) => c.req.header(name))) return respondPaidCall(c, deps, route);
  const { prepared } = route;
  const start = { capability: route.capability, model: prepared.model.id, provider: prepared.model.provider, route: route.path, quoted: prepared.amount };
  return deps.tracing.trace({ ...start, streamed: prepared.events !== undefined }, () => respondPaidCall(c, deps, route));
}

async function respondPaidCall(c: Context, deps: PaidRouteDeps, route: PaidRoute): Promise<Response> {
  const { prepared } = route;
  let usage: Partial<TokenUsage> | undefined;
  const counted = (work: () => Promise<WorkOutput>): Promise<WorkOutput> =>
    deps.metrics.timeGeneration(route.capability, prepared.model.id, async () => {
      const result = await work();
      usage = result.usage;
      traceWork(prepared.model.id, result);
      return result;
    });
  const request = { header: (name: string) => c.req.header(name), origin: requestOrigin(c, deps.config) };
  const paid = await paidCall(deps, route, request, () => counted(() => prepared.run()));
  if (prepared.events) return respondStreamed(c, deps, route, prepared.events, paid, counted);

  const outcome = await deps.gate.process(paid.call);
  traceOutcome(outcome);
  if (outcome.kind !== 'delivered') return answerJson(c, deps.answers.render(outcome, paid.context, paid.call.payment));
  const headers = { ...receiptHeaders(outcome.receipt, outcome.wires), ...chargeHeaders(outcome.receipt.amount!, usage ?? route.usageOf?.(outcome.body)) };
  if (route.deliver) return route.deliver(outcome.body, headers);
  return c.json(outcome.body, outcome.status as 200, headers);
}

/** What the gate needs of a request to a paid route: its headers and the origin it was made to. */
export interface PaidRequest {
  header: HeaderReader;
  origin: string;
}

/** A request to a paid route as the gate's call, and what its 402 says beside the gate's offers. */
export interface HttpPaidCall {
  call: PaidCall;
  context: PaymentRequiredContext;
}

/** The gate's call for one request to a paid route; `work` runs only once its payment is verified. */
export async function paidCall(deps: PaidRouteDeps, route: PaidRoute, request: PaidRequest, work: PaidCall['work']): Promise<HttpPaidCall> {
  const paid = carriesPayment(request.header);
  const { origin } = request;
  // the route's sign-in-with-x challenge for an unpaid call's 402 (each 402 gets a fresh nonce)
  const challenge = paid ? undefined : await signInChallenge(origin, `${origin}${route.path}`, deps.gate.enabledNetworks);
  const call: PaidCall = {
    payment: paid ? paymentFromHeaders(request.header) : undefined,
    network: request.header('X-Network'),
    names: HTTP_NAMES,
    resource: `${origin}${route.path}`,
    model: route.prepared.model.id,
    description: route.description,
    amount: route.prepared.amount,
    maxTimeoutSeconds: deps.config.maxTimeoutSeconds[route.capability],
    // only a paid call needs to identify its body
    requestHash: paid ? requestHash(route.path, route.body) : '',
    settleFirst: (network) => settlesFirst(deps.config.settleFirst, network, route.capability),
    metered: route.metered === true,
    ...(route.prepared.events ? { streamSeconds: Math.ceil(deps.providers.settings(route.prepared.model).timeoutMs / 1000) } : {}),
    work,
  };
  const context: PaymentRequiredContext = {
    call,
    bodyFields: route.bodyFields,
    serviceName: deps.config.service.name,
    tags: deps.config.service.tags,
    ...(route.extensions ? { extensions: route.extensions(origin) } : {}),
    ...(challenge ? { signInChallenge: challenge } : {}),
  };
  return { call, context };
}

function answerJson(c: Context, answer: PaymentAnswer): Response {
  // an already serialised document (the 402): its headers stay a plain record to the socket
  if (typeof answer.body === 'string') return plainResponse(c, answer.body, answer.status, { ...answer.headers, 'Content-Type': 'application/json' });
  return c.json(answer.body, answer.status as 200, answer.headers);
}

/** What a stream's body holds that its client has not read yet, before the model is paused. */
export const STREAM_BUFFER_BYTES = 64 * 1024;

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
};

async function respondStreamed(
  c: Context,
  deps: PaidRouteDeps,
  route: PaidRoute,
  events: EventStream,
  paid: HttpPaidCall,
  counted: (work: () => Promise<WorkOutput>) => Promise<WorkOutput>,
): Promise<Response> {
  const encoder = new TextEncoder();
  const client = new AbortController();
  let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
  let open = true;
  // Backpressure: the body holds at most STREAM_BUFFER_BYTES the client has not read; past that, write() returns a
  // promise that resolves once the client reads again (pull) or leaves (cancel), and the events' run loop awaits it
  // before it reads the next piece from the model.
  let room: (() => void) | undefined;
  const wake = () => {
    room?.();
    room = undefined;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        sink = controller;
      },
      pull: wake,
      cancel() {
        open = false;
        wake();
        client.abort(new Error('the client closed the stream before the answer was complete'));
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
  );
  const write = (text: string): Promise<void> | undefined => {
    if (!open || !text) return undefined;
    sink!.enqueue(encoder.encode(text));
    if ((sink!.desiredSize ?? 0) > 0) return undefined;
    return new Promise<void>((resolve) => {
      const previous = room;
      room = () => (previous?.(), resolve());
    });
  };
  const close = () => {
    if (open) sink!.close();
    open = false;
    wake();
    currentCallTrace()?.streamClosed();
  };

  let started!: (payment: WorkPayment) => void;
  const workStarted = new Promise<WorkPayment>((resolve) => (started = resolve));
  const answered = deps.gate.process({
    ...paid.call,
    work: (payment) => {
      started(payment);
      // under upto a short payment bounds the stream: it ends there as if its token limit were reached
      const signal = payment.deadline === undefined ? client.signal : AbortSignal.any([client.signal, streamDeadlineSignal(payment.deadline)]);
      return counted(() => events.run(write, signal));
    },
  });
  const first = await Promise.race([workStarted, answered.then(() => 'answered' as const, () => 'answered' as const)]);

  if (first === 'answered') {
    // no work ran: a refusal (402, 409, an error) answered as usual, or a kept result replayed as a stream
    const outcome = await answered;
    traceOutcome(outcome);
    if (outcome.kind !== 'delivered') return answerJson(c, deps.answers.render(outcome, paid.context, paid.call.payment));
    const charged = outcome.receipt.amount!;
    write(events.end(outcome.body, streamReceipt(outcome), true));
    close();
    const headers = { ...SSE_HEADERS, ...receiptHeaders(outcome.receipt, outcome.wires), ...chargeHeaders(charged, route.usageOf?.(outcome.body)) };
    return new Response(body, { status: 200, headers });
  }

  // the amount goes out with the first byte when it is already known (exact); under upto only the last event has it
  const headers = { ...SSE_HEADERS, ...(first.charge === undefined ? {} : chargeHeaders(first.charge, undefined)) };
  answered
    .then(
      (outcome) => {
        traceOutcome(outcome, client.signal.aborted);
        write(outcome.kind === 'delivered' ? events.end(outcome.body, streamReceipt(outcome), false) : events.failure(streamFailure(outcome, paid.call.payment)));
      },
      (error: unknown) => {
        // decided and logged as on every route (errorAnswer); the stream's last event says it in the surface's shape
        const { status, code, message } = errorAnswer(error, c, deps.log);
        write(events.failure({ status, code, message }));
      },
    )
    .finally(close);
  return new Response(body, { status: 200, headers });
}

/** The paid call's trace (if traced) told what the work produced: the model that answered, the tokens it used. */
function traceWork(model: string, output: WorkOutput): void {
  const trace = currentCallTrace();
  trace?.response(model, output.finishReason);
  trace?.usage(output.usage);
}

/** The paid call's trace (if traced) told how its payment ended. */
function traceOutcome(outcome: PaymentOutcome, clientLeft = false): void {
  const trace = currentCallTrace();
  if (!trace) return;
  if (outcome.kind === 'delivered') trace.state('delivered', outcome.receipt);
  else if (clientLeft) trace.state('aborted', undefined, 'the client left before the answer was complete');
  else if (outcome.kind === 'payment_required') trace.state('payment_required', outcome.failed?.receipt, outcome.reason);
  else if (outcome.kind === 'pending') trace.state('pending', outcome.transaction ? { transaction: outcome.transaction } : undefined);
  else trace.state('refused', outcome.transaction ? { transaction: outcome.transaction } : undefined, outcome.code);
}

/**
 * The settlement receipt a stream's last event carries, with the amount charged; its network spelled as the
 * receipt header of the payment's wire spells it (v2: the CAIP-2 id, v1: the name).
 */
function streamReceipt(outcome: Extract<PaymentOutcome, { kind: 'delivered' }>): StreamReceipt {
  const { receipt } = outcome;
  const network = outcome.wires.includes(2) ? caip2Of(receipt.network) : receipt.network;
  return { success: true, transaction: receipt.transaction, network, payer: receipt.payer, amount: receipt.amount!.toString() };
}

/** An outcome other than delivered once the stream is open: settlement failed or still pending, or a refusal. */
function streamFailure(outcome: Exclude<PaymentOutcome, { kind: 'delivered' }>, payment: PaidCall['payment']): StreamFailure {
  switch (outcome.kind) {
    case 'payment_required':
      return { status: 402, code: 'settlement_failed', message: outcome.reason };
    case 'pending':
      return {
        status: 409,
        code: 'settlement_pending',
        message: 'settlement was sent but is not confirmed yet; retry with the SAME X-PAYMENT to receive your result — do not pay again',
      };
    case 'refused': {
      const error = refusalError(outcome, payment);
      return { status: error.status, code: error.code, message: error.message };
    }
  }
}
