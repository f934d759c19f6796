// What every paid call tells the operator, whichever transport it came on (an HTTP route or an MCP tool): a span
// per call that carries a payment (when tracing is on), its work timed in the generation metrics, and how its
// payment ended. The gate's verify and settle reach the same span through the PaymentObserver (tracing/).
import type { PreparedCall, WorkOutput } from '../../api/endpoint.ts';
import type { Capability } from '../../config/schema.ts';
import type { PaymentOutcome } from '../../payments/outcome.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import { currentCallTrace, type Tracing } from '../../tracing/paid-call-trace.ts';
import type { HttpMetrics } from '../metrics.ts';

export interface ObservedDeps {
  metrics: HttpMetrics;
  /** traces of the paid calls (tracing/), when the config turns tracing on */
  tracing?: Tracing | undefined;
}

/**
 * Runs `answer` inside the call's trace when it carries a payment and tracing is on (else as it is); the span
 * ends when the call is answered (`statusOf` its answer) or, for a stream, when its last event is written.
 */
export function traced<T>(
  deps: ObservedDeps,
  call: { capability: Capability; route: string; prepared: PreparedCall; paid: boolean },
  answer: () => Promise<T>,
  statusOf: (answer: T) => number,
): Promise<T> {
  if (!deps.tracing || !call.paid) return answer();
  const { prepared } = call;
  const start = { capability: call.capability, model: prepared.model.id, provider: prepared.model.provider, route: call.route, quoted: prepared.amount, streamed: prepared.events !== undefined };
  return deps.tracing.trace(start, answer, statusOf);
}

/** A call's work timed in the generation metrics and told to its trace; `usage()` is what the last run reported. */
export function countedWork(deps: ObservedDeps, capability: Capability, model: string) {
  let usage: Partial<TokenUsage> | undefined;
  return {
    count(work: () => Promise<WorkOutput>): Promise<WorkOutput> {
      return deps.metrics.timeGeneration(capability, model, async () => {
        const result = await work();
        usage = result.usage;
        const trace = currentCallTrace();
        trace?.response(model, result.finishReason);
        trace?.usage(result.usage);
        return result;
      });
    },
    usage: () => usage,
  };
}

/** The call's trace (if traced) told how its payment ended. */
export function traceOutcome(outcome: PaymentOutcome, clientLeft = false): void {
  const trace = currentCallTrace();
  if (!trace) return;
  if (outcome.kind === 'delivered') trace.state('delivered', outcome.receipt);
  else if (clientLeft) trace.state('aborted', undefined, 'the client left before the answer was complete');
  else if (outcome.kind === 'payment_required') trace.state('payment_required', outcome.failed?.receipt, outcome.reason);
  else if (outcome.kind === 'pending') trace.state('pending', outcome.transaction ? { transaction: outcome.transaction } : undefined);
  else trace.state('refused', outcome.transaction ? { transaction: outcome.transaction } : undefined, outcome.code);
}
