// Tracing on: the paid calls' spans exported over OTLP/HTTP (JSON) in batches, by the OpenTelemetry SDK's
// tracer provider and exporter. Loaded with import() only when the config turns tracing on, so a gateway without
// tracing never loads the SDK (idle memory). The spans are made from finished calls (paid-call-trace.ts) with
// their real start and end times; no context manager or instrumentation is installed.
import type { Logger } from 'pino';
import type { Config } from '../config/load.ts';
import { Tracing, type FinishedCall, type SpanSink } from './paid-call-trace.ts';

/** The service's tracing, or undefined when the config leaves it off (no endpoint). */
export async function startTracing(config: Config, log: Logger): Promise<Tracing | undefined> {
  const { endpoint, serviceName } = config.tracing;
  if (!endpoint) return undefined;
  const [{ SpanKind, SpanStatusCode, ROOT_CONTEXT }, { TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  // OTEL_EXPORTER_OTLP_HEADERS / OTEL_EXPORTER_OTLP_TRACES_HEADERS (a collector's API key) are read by the exporter
  const exporter = new OTLPTraceExporter({ url: endpoint });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.tracing.exportDelayMs })],
  });
  const tracer = provider.getTracer('x402-ai-gateway');
  log.info({ endpoint, serviceName }, 'tracing: paid calls exported over OTLP/HTTP');
  const sink: SpanSink = {
    export(call: FinishedCall) {
      const span = tracer.startSpan(call.name, { kind: SpanKind.SERVER, startTime: call.startTime, attributes: call.attributes }, ROOT_CONTEXT);
      if (call.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: call.error });
      span.end(call.endTime);
    },
    async shutdown() {
      await provider.shutdown().catch((error: unknown) => log.warn({ err: String(error) }, 'tracing: the last spans were not exported'));
    },
  };
  return new Tracing(sink);
}
