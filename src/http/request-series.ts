// The request series, http_requests_total and http_request_duration_seconds, kept in one table and written out
// exactly as prom-client's Counter and Histogram write them (request-series.test.ts holds the two to the same
// text). prom-client checks and hashes the label object on every observation of each metric, ~2 us a request
// (3-4% of an unpaid 402's CPU in its profile); here a request costs a string key, a Map lookup and a bucket
// search. The registry takes any object with a name and get(), as it takes its own metrics.
import type { Registry } from 'prom-client';

interface RequestLabels {
  method: string;
  route: string;
  status: string;
}

interface Series {
  labels: RequestLabels;
  count: number;
  sum: number;
  /** observations per bucket (not cumulative); the last one is +Inf */
  perBucket: number[];
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export interface RequestSeriesNames {
  counter: { name: string; help: string };
  histogram: { name: string; help: string; buckets: readonly number[] };
}

export class RequestSeries {
  private series = new Map<string, Series>();
  private readonly bounds: readonly number[];

  constructor(registry: Registry, { counter, histogram }: RequestSeriesNames) {
    this.bounds = histogram.buckets;
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]) => ({
      name, // an OpenMetrics registry renames a counter (http_requests_total becomes http_requests), as prom-client's own
      help,
      type,
      aggregator: 'sum' as const,
      async get() {
        return { name: this.name, help, type, aggregator: 'sum' as const, values: values() };
      },
      reset: () => {
        this.series = new Map();
      },
    });
    registry.registerMetric(metric(counter.name, counter.help, 'counter', () => this.counterValues()) as never);
    registry.registerMetric(metric(histogram.name, histogram.help, 'histogram', () => this.histogramValues(histogram.name)) as never);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, perBucket: new Array<number>(this.bounds.length + 1).fill(0) };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    series.perBucket[bucket]!++;
  }

  private counterValues(): MetricValue[] {
    return [...this.series.values()].map(({ labels, count }) => ({ labels: { ...labels }, value: count }));
  }

  private histogramValues(name: string): MetricValue[] {
    const values: MetricValue[] = [];
    for (const { labels, count, sum, perBucket } of this.series.values()) {
      let cumulative = 0;
      for (const [i, bound] of this.bounds.entries()) {
        cumulative += perBucket[i]!;
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${name}_bucket` });
      }
      values.push(
        { labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` },
        { labels: { ...labels }, value: sum, metricName: `${name}_sum` },
        { labels: { ...labels }, value: count, metricName: `${name}_count` },
      );
    }
    return values;
  }
}
