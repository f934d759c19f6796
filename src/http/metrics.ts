// Prometheus metrics: request counts and latency by route and status, plus the process defaults.
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  /** generation runs (paid work), by capability and outcome: one per payment, never more */
  readonly generations = new Counter({
    name: 'generations_total',
    help: 'Generation runs by capability and outcome',
    labelNames: ['capability', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const started = performance.now();
      await next();
      // the matched route pattern, never the raw path: /media/:id must not create a series per id
      const labels = { method: c.req.method, route: routePath(c, -1), status: String(c.res.status) };
      this.requests.inc(labels);
      this.latency.observe(labels, (performance.now() - started) / 1000);
    };
  }
}
