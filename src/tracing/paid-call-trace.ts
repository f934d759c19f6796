// What one paid call's span will say, gathered while the call runs, and the span made of it once the call is
// answered (a stream: once its last event is written). Nothing here loads OpenTelemetry: the record is plain
// data, handed at its end to a SpanSink (otlp-tracing.ts, loaded only when tracing is on). The route layer starts a
// trace and runs the call inside it (AsyncLocalStorage), so the payment observer (traced-payments.ts) and the
// route's steps find it with currentCallTrace() without the gate knowing. docs/observability.md lists the attributes.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Capability } from '../config/schema.ts';
import type { TokenUsage } from '../pricing/token-usage.ts';

export type SpanAttributes = Record<string, string | number | boolean | string[]>;

/** A finished call, as the sink turns it into a span. */
export interface FinishedCall {
  name: string;
  /** epoch milliseconds */
  startTime: number;
  endTime: number;
  attributes: SpanAttributes;
  /** why the call ended without its result, when it did */
  error?: string | undefined;
}

export interface SpanSink {
  export(call: FinishedCall): void;
  /** exports what is still buffered and stops */
  shutdown(): Promise<void>;
}

/** What the route knows of a paid call when it starts. */
export interface CallStart {
  capability: Capability;
  /** the catalog id quoted */
  model: string;
  /** the catalog entry's provider (an upstream's name, or the local engine's) */
  provider: string;
  /** the route's path (http.route), or an MCP tool's resource */
  route: string;
  /** the quote, in atomic units (for a metered call, the most it may cost) */
  quoted: bigint;
  streamed: boolean;
}

/** GenAI operation names (OpenTelemetry semantic conventions) and output types by capability. */
const OPERATION: Record<Capability, { operation: string; output: string }> = {
  chat: { operation: 'chat', output: 'text' },
  image: { operation: 'generate_content', output: 'image' },
  speech: { operation: 'generate_content', output: 'speech' },
};

/** How a paid call ended, as `x402.payment.state` says it. */
export type PaymentState = 'settled' | 'failed' | 'pending' | 'payment_required' | 'refused' | 'delivered' | 'aborted' | 'error';

export class PaidCallTrace {
  private readonly startTime = Date.now();
  private readonly attributes: SpanAttributes;
  private readonly name: string;
  private readonly streamed: boolean;
  private answeredStatus: number | undefined;
  private streamEnded = false;
  private ended = false;
  private error: string | undefined;
  private readonly sink: SpanSink;

  constructor(sink: SpanSink, start: CallStart) {
    this.sink = sink;
    const { operation, output } = OPERATION[start.capability];
    this.name = `${operation} ${start.model}`;
    this.streamed = start.streamed;
    this.attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.output.type': output,
      'gen_ai.request.model': start.model,
      'gen_ai.provider.name': start.provider,
      'http.route': start.route,
      'x402.capability': start.capability,
      'x402.amount.quoted': start.quoted.toString(),
      'x402.stream': start.streamed,
    };
  }

  /** the facilitator's verification: its outcome (valid, invalid, error) and how long it took */
  verified(labels: { scheme: string; network: string }, outcome: string, ms: number, payer?: string): void {
    this.set({ 'x402.scheme': labels.scheme, 'x402.network': labels.network, 'x402.verify.outcome': outcome, 'x402.verify.duration_ms': ms });
    if (payer) this.set({ 'x402.payer': payer });
  }

  /** the settlement: the amount sent for settling, its outcome (settled, failed, pending) and transaction */
  settled(labels: { scheme: string; network: string }, amount: bigint, outcome: string, ms: number, transaction: string | undefined): void {
    this.set({ 'x402.scheme': labels.scheme, 'x402.network': labels.network, 'x402.settle.outcome': outcome, 'x402.settle.duration_ms': ms });
    if (outcome === 'settled') this.set({ 'x402.amount.charged': amount.toString() });
    if (transaction) this.set({ 'x402.transaction': transaction });
  }

  /** the tokens the model reported */
  usage(usage: TokenUsage | undefined): void {
    if (!usage) return;
    this.set({ 'gen_ai.usage.input_tokens': usage.promptTokens, 'gen_ai.usage.output_tokens': usage.completionTokens });
    if (usage.cachedInputTokens !== undefined) this.set({ 'gen_ai.usage.cache_read.input_tokens': usage.cachedInputTokens });
    if (usage.reasoningTokens !== undefined) this.set({ 'gen_ai.usage.reasoning.output_tokens': usage.reasoningTokens });
  }

  /** the model that answered and why it stopped */
  response(model: string, finishReason?: string): void {
    this.set({ 'gen_ai.response.model': model });
    if (finishReason) this.set({ 'gen_ai.response.finish_reasons': [finishReason] });
  }

  /** how the payment ended; a delivered call also gives its receipt (transaction, amount charged) */
  state(state: PaymentState, receipt?: { transaction: string; amount?: bigint | undefined; payer?: string }, reason?: string): void {
    this.set({ 'x402.payment.state': state });
    if (receipt?.transaction) this.set({ 'x402.transaction': receipt.transaction });
    if (receipt?.amount !== undefined) this.set({ 'x402.amount.charged': receipt.amount.toString() });
    if (receipt?.payer) this.set({ 'x402.payer': receipt.payer });
    if (state !== 'delivered' && state !== 'settled') this.error = reason ?? state;
  }

  /** the route answered (a stream: its headers went out); a plain answer ends the span here */
  answered(status: number): void {
    this.answeredStatus = status;
    this.set({ 'http.response.status_code': status });
    if (!this.streamed || status !== 200 || this.streamEnded) this.end();
  }

  /** a stream's last event was written (or the client left): the span ends once the route has answered too */
  streamClosed(): void {
    this.streamEnded = true;
    if (this.answeredStatus !== undefined) this.end();
  }

  /** the call threw instead of answering */
  failed(error: unknown): void {
    this.error ??= error instanceof Error ? error.name : 'error';
    if (this.attributes['x402.payment.state'] === undefined) this.set({ 'x402.payment.state': 'error' });
    this.end();
  }

  private set(attributes: SpanAttributes): void {
    if (!this.ended) Object.assign(this.attributes, attributes);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sink.export({ name: this.name, startTime: this.startTime, endTime: Date.now(), attributes: this.attributes, error: this.error });
  }
}

const current = new AsyncLocalStorage<PaidCallTrace>();

/** The trace of the paid call this code runs for, if tracing is on. */
export function currentCallTrace(): PaidCallTrace | undefined {
  return current.getStore();
}

/** Starts and runs paid calls' traces. */
export class Tracing {
  private readonly sink: SpanSink;

  constructor(sink: SpanSink) {
    this.sink = sink;
  }

  /**
   * Runs `call` inside a new trace; the span ends when the call answers (`statusOf` its answer: an HTTP status, or
   * what an MCP tool result stands for), or when a stream closes.
   */
  async trace<T>(start: CallStart, call: () => Promise<T>, statusOf: (answer: T) => number): Promise<T> {
    const trace = new PaidCallTrace(this.sink, start);
    return current.run(trace, async () => {
      try {
        const answer = await call();
        trace.answered(statusOf(answer));
        return answer;
      } catch (error) {
        trace.failed(error);
        throw error;
      }
    });
  }

  shutdown(): Promise<void> {
    return this.sink.shutdown();
  }
}
