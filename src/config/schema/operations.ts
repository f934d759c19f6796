// What an operator reads and controls: logs, traces, and the tokens of the operator API and of /metrics.
import { z } from 'zod';
import { milliseconds } from './duration.ts';

const envVarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

export const operationsFields = {
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * json: one JSON object a line, for machines; pretty: readable lines for a person (LOG_FORMAT).
   * Unset: pretty when stdout is a terminal, else json.
   */
  logFormat: z.enum(['json', 'pretty']).optional(),
  /**
   * OpenTelemetry traces of the paid calls (docs/observability.md), exported over OTLP/HTTP (JSON). Off unless
   * `endpoint` is set (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT is).
   */
  tracing: z
    .object({
      /** the OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces; absent: tracing is off */
      endpoint: z.url().optional(),
      serviceName: z.string().min(1).default('x402-ai-gateway'),
      /** how long finished spans wait to be exported together */
      exportDelayMs: milliseconds().default(5_000),
    })
    .default({ serviceName: 'x402-ai-gateway', exportDelayMs: 5_000 }),
  /**
   * name of the environment variable (or NAME_FILE) holding the bearer token of the operator API
   * (/api/v1/admin/*). Unset or empty: that API answers 403 admin_disabled.
   */
  adminTokenEnv: envVarName.default('ADMIN_TOKEN'),
  /**
   * name of the environment variable (or NAME_FILE) holding the bearer token that GET /metrics then requires.
   * Unset or empty: /metrics is open (keep it off the public network).
   */
  metricsTokenEnv: envVarName.default('METRICS_TOKEN'),
};
