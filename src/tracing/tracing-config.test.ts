// Where tracing's settings come from: off by default; the config's `tracing` block; OpenTelemetry's own
// environment variables over it, setting by setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../config/load.ts';

test('tracing is off by default', () => {
  assert.equal(loadConfig({}).tracing.endpoint, undefined);
});

test('the config block turns it on, with a service name and an export delay', () => {
  const { tracing } = loadConfig({}, { tracing: { endpoint: 'http://collector:4318/v1/traces', serviceName: 'edge-1' } });
  assert.deepEqual(tracing, { endpoint: 'http://collector:4318/v1/traces', serviceName: 'edge-1', exportDelayMs: 5_000 });
});

test('OTEL_EXPORTER_OTLP_ENDPOINT is a base URL (/v1/traces appended); the _TRACES_ one is taken as is and wins', () => {
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.endpoint, 'http://collector:4318/v1/traces');
  const both = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' };
  assert.equal(loadConfig(both).tracing.endpoint, 'http://b:4318/custom');
});

test('the variables override single settings of the file\'s block, and OTEL_SDK_DISABLED turns tracing off', () => {
  const file = { tracing: { endpoint: 'http://collector:4318/v1/traces', exportDelayMs: 100 } };
  assert.deepEqual(loadConfig({ OTEL_SERVICE_NAME: 'edge-2' }, file).tracing, { endpoint: 'http://collector:4318/v1/traces', serviceName: 'edge-2', exportDelayMs: 100 });
  assert.equal(loadConfig({ OTEL_SDK_DISABLED: 'true' }, file).tracing.endpoint, undefined);
  assert.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'none' }, file).tracing.endpoint, undefined);
});

test('an endpoint that is not a URL stops startup, named', () => {
  assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector' }), (error: unknown) => error instanceof ConfigError && /tracing\.endpoint/.test(error.message));
});
