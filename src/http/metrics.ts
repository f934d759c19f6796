// Prometheus metrics: request counts and latency by route and status, generation runs and their latency per
// model, plus the process defaults. The payment series live in payments/payment-metrics.ts, on the same registry.
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestSeries, type RequestSeriesNames } from './request-series.ts';

export const REQUEST_SERIES: RequestSeriesNames = {
  counter: { name: 'http_requests_total', help: 'HTTP requests by method, route and status' },
  histogram: {
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  },
};

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests = new RequestSeries(this.registry, REQUEST_SERIES);
  /** generation runs (paid work), by capability and outcome: one per payment, never more */
  readonly generations = new Counter({
    name: 'generations_total',
    help: 'Generation runs by capability and outcome',
    labelNames: ['capability', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly generationLatency = new Histogram({
    name: 'generation_duration_seconds',
    help: 'Time a paid generation took (the model call, checks and storing its media), by capability, model quoted and outcome',
    labelNames: ['capability', 'model', 'outcome'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  /** Runs one paid generation, counting it and timing it by capability and model. */
  async timeGeneration<T>(capability: string, model: string, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let outcome = 'failure';
    try {
      const result = await run();
      outcome = 'success';
      return result;
    } finally {
      this.generations.inc({ capability, outcome });
      this.generationLatency.observe({ capability, model, outcome }, (performance.now() - started) / 1000);
    }
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const started = performance.now();
      await next();
      // the matched route pattern, never the raw path: /media/:id must not create a series per id
      this.observeRequest(c.req.method, routePath(c, -1), c.res.status, started);
    };
  }

  /** One answered request, `started` being its performance.now() on arrival. */
  observeRequest(method: string, route: string, status: number, started: number): void {
    this.requests.observe(method, route, status, (performance.now() - started) / 1000);
  }
}
