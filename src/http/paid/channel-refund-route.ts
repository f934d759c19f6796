// GET on a paid route's URL: where the official x402 batch-settlement client asks for a cooperative refund of its
// payment channel (`refundChannel(url)`). Its probe (no payment, X-Network named by its fetch) gets the route's
// 402, with the batch-settlement offer; its second GET carries the refund voucher in PAYMENT-SIGNATURE. The
// route's work never runs: the gate takes nothing but a refund here (PaidCall.refundOnly). Any other GET (no
// X-Network and no payment) is what it was, a 405 naming POST: these are middlewares, not GET routes, so the
// paths' Allow stays "POST".
import type { Context, Hono } from 'hono';
import type { Config } from '../../config/load.ts';
import type { PaymentGate } from '../../payments/gate.ts';
import type { PaidCall } from '../../payments/outcome.ts';
import { carriesPayment, HTTP_NAMES, paymentFromHeaders, receiptHeaders, type HttpPaymentAnswers, type PaymentRequiredContext } from './payment-edge.ts';
import { requestOrigin } from '../origin.ts';
import { plainResponse } from '../response-headers.ts';
import { signInChallenge } from '../../x402/sign-in-with-x.ts';

export interface RefundRoute {
  path: string;
  description: string;
  bodyFields: Record<string, unknown>;
}

/**
 * The nominal per-request amount of the refund URL's offer: a refund charges nothing and its voucher signs what
 * was charged already, so the amount only has to be the same in the probe's offer and the refund's `accepted`.
 */
export const REFUND_OFFER_AMOUNT = 1n;

export function mountChannelRefunds(app: Hono, deps: { config: Config; gate: PaymentGate; answers: HttpPaymentAnswers }, routes: readonly RefundRoute[]): void {
  for (const route of routes) {
    app.use(route.path, async (c, next) => {
      const concernsChannels = c.req.method === 'GET' && (c.req.header('X-Network') !== undefined || carriesPayment((name) => c.req.header(name)));
      if (!concernsChannels) return next();
      return refund(c, deps, route);
    });
  }
}

async function refund(c: Context, deps: { config: Config; gate: PaymentGate; answers: HttpPaymentAnswers }, route: RefundRoute): Promise<Response> {
  const header = (name: string) => c.req.header(name);
  const origin = requestOrigin(c, deps.config);
  const paid = carriesPayment(header);
  const challenge = paid ? undefined : await signInChallenge(origin, `${origin}${route.path}`, deps.gate.enabledNetworks);
  const call: PaidCall = {
    payment: paid ? paymentFromHeaders(header) : undefined,
    network: header('X-Network'),
    names: HTTP_NAMES,
    resource: `${origin}${route.path}`,
    model: '',
    description: route.description,
    amount: REFUND_OFFER_AMOUNT,
    maxTimeoutSeconds: 300,
    requestHash: '',
    settleFirst: () => false,
    refundOnly: true,
    work: () => Promise.reject(new Error('a refund runs no work')),
  };
  const context: PaymentRequiredContext = {
    call,
    bodyFields: route.bodyFields,
    serviceName: deps.config.service.name,
    tags: deps.config.service.tags,
    ...(challenge ? { signInChallenge: challenge } : {}),
  };
  const outcome = await deps.gate.process(call);
  if (outcome.kind === 'delivered') return c.json(outcome.body, 200, receiptHeaders(outcome.receipt, outcome.wires));
  const answer = deps.answers.render(outcome, context, call.payment);
  if (typeof answer.body === 'string') return plainResponse(c, answer.body, answer.status, { ...answer.headers, 'Content-Type': 'application/json' });
  return c.json(answer.body, answer.status as 400, answer.headers);
}
