// The request series write the very text prom-client's own Counter and Histogram write for the same requests:
// a scraper (and every dashboard on these names) sees no difference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestSeries } from './request-series.ts';
import { REQUEST_SERIES } from './metrics.ts';

const REQUESTS: [method: string, route: string, status: number, seconds: number][] = [
  ['POST', '/api/v1/ai/images', 402, 0.0004],
  ['POST', '/api/v1/ai/images', 402, 0.001], // on a bucket's bound: counted in that bucket
  ['POST', '/api/v1/ai/images', 200, 0.73],
  ['GET', '/media/:id', 404, 0.0021],
  ['POST', '/api/v1/ai/chat', 200, 75], // past the last bound: +Inf only
  ['POST', '/api/v1/ai/images', 402, 0.0123],
  ['POST', '/v1/chat/completions', 499, 3.5],
];

function emptyRegistry(openMetrics: boolean): Registry {
  const registry = new Registry();
  if (openMetrics) registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as never);
  return registry;
}

/** prom-client's own Counter and Histogram on these names, told of the same requests */
function promClientRegistry(openMetrics = false): Registry {
  const registry = emptyRegistry(openMetrics);
  const labelNames = ['method', 'route', 'status'] as const;
  const counter = new Counter({ ...REQUEST_SERIES.counter, labelNames, registers: [registry] });
  const histogram = new Histogram({ ...REQUEST_SERIES.histogram, buckets: [...REQUEST_SERIES.histogram.buckets], labelNames, registers: [registry] });
  for (const [method, route, status, seconds] of REQUESTS) {
    counter.inc({ method, route, status: String(status) });
    histogram.observe({ method, route, status: String(status) }, seconds);
  }
  return registry;
}

function ourRegistry(openMetrics = false): Registry {
  const registry = emptyRegistry(openMetrics);
  const series = new RequestSeries(registry, REQUEST_SERIES);
  for (const request of REQUESTS) series.observe(...request);
  return registry;
}

test('the same requests give the same exposition text, in Prometheus and OpenMetrics formats', async () => {
  assert.equal(await ourRegistry().metrics(), await promClientRegistry().metrics());
  assert.equal(await ourRegistry(true).metrics(), await promClientRegistry(true).metrics());
});

test('the JSON form and a reset match prom-client too', async () => {
  const [ours, theirs] = [ourRegistry(), promClientRegistry()];
  const strip = (metrics: Array<{ values: Array<Record<string, unknown>> }>) =>
    metrics.map((m) => ({ ...m, values: m.values.map(({ labels, value, metricName }) => ({ labels, value, metricName })) }));
  assert.deepEqual(strip(await ours.getMetricsAsJSON()), strip(await theirs.getMetricsAsJSON()));

  ours.resetMetrics();
  theirs.resetMetrics();
  assert.equal(await ours.metrics(), await theirs.metrics());
});
