// What a gateway's V8 spent collecting garbage, from its own /metrics: prom-client's nodejs_gc_duration_seconds
// (every kind summed) and the requests it answered (http_requests_total, every series). Read before and after a
// load, the difference is GC time per request: a figure that one process's JIT luck, which moves CPU per request
// by up to 25% between two gateways of the same code, does not move.

export interface GcReading {
  gcSeconds: number;
  requests: number;
}

const sumOf = (text: string, metric: string) =>
  [...text.matchAll(new RegExp(`^${metric}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))].reduce((sum, match) => sum + Number(match[1]), 0);

export async function readGc(origin: URL): Promise<GcReading> {
  const text = await (await fetch(new URL('/metrics', origin))).text();
  return { gcSeconds: sumOf(text, 'nodejs_gc_duration_seconds_sum'), requests: sumOf(text, 'http_requests_total') };
}

/** GC milliseconds per 1,000 requests answered between two readings. */
export const gcMsPerThousand = (before: GcReading, after: GcReading) =>
  ((after.gcSeconds - before.gcSeconds) * 1000) / ((after.requests - before.requests) / 1000);
