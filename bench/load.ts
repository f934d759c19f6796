// A closed-loop HTTP load generator: N kept-alive connections, each sending its next request as soon as the
// previous response has been read to its end. Timed loops of one repeated request go over lean connections
// (lean-connection.ts: bytes prepared once, the answer's end found with minimal parsing); calls that need the
// whole answer (send, sendOnce, fixedLoad) go through node:http's client.
import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { LeanConnection, requestBytes, type WireRequest } from './lean-connection.ts';

/** One request of a load: its method, path, headers and body. */
export type RequestSpec = WireRequest;

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  ms: number;
}

export interface LatencyStats {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadResult extends LatencyStats {
  connections: number;
  seconds: number;
  rps: number;
  /** responses whose status was not the expected one (or transport errors) */
  unexpected: number;
  statuses: Record<string, number>;
  /** CPU of the load generator and of the server process, in % of one core, over the measured window */
  clientCpuPct: number;
  serverCpuPct: number | null;
}

export function jsonRequest(path: string, body: unknown, headers: Record<string, string> = {}): RequestSpec {
  const bytes = Buffer.from(JSON.stringify(body));
  return {
    method: 'POST',
    path,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(bytes.length), ...headers },
    body: bytes,
  };
}

export function newAgent(connections: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections, keepAliveMsecs: 1000 });
}

/** Sends one request and reads its whole response. `keepBody` false drains it without buffering. */
export function send(agent: Agent, origin: URL, spec: RequestSpec, keepBody = true): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      { agent, host: origin.hostname, port: origin.port, method: spec.method, path: spec.path, headers: spec.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (keepBody) chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - started }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(spec.body);
  });
}

/** One JSON POST on a connection of its own (setup calls outside a timed window: quotes, the faucet). */
export function postOnce(origin: URL, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return sendOnce(origin, jsonRequest(path, body, headers));
}

/** One request on a connection of its own (setup calls outside a timed window: quotes, the faucet, health). */
export async function sendOnce(origin: URL, spec: RequestSpec): Promise<Reply> {
  const agent = newAgent(1);
  try {
    return await send(agent, origin, spec);
  } finally {
    agent.destroy();
  }
}

export function stats(samples: number[]): LatencyStats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

/** utime + stime of a process, in seconds (Linux /proc; USER_HZ is 100 on every common kernel). */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

export interface TimedLoadOptions {
  origin: URL;
  spec: RequestSpec;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  expectStatus: number;
  /** the server's pid, for its CPU use */
  serverPid?: number;
  /**
   * a body of its own for every request: a counter written over the `#000000` the body holds (same length), so a
   * server that keeps answers by the request's bytes finds none (bench/unpaid-402.ts)
   */
  newBodies?: boolean;
}

/** What `newBodies` writes a counter over. */
export const BODY_COUNTER = '#000000';
let bodiesSent = 0;

/** `template` with the next counter over its BODY_COUNTER at `at`, or `template` itself when `at` is -1. */
function nextBody(template: Buffer, at: number): Buffer {
  if (at === -1) return template;
  const bytes = Buffer.from(template);
  bytes.write(String(++bodiesSent % 1e6).padStart(6, '0'), at + 1, 'latin1');
  return bytes;
}

/** One closed-loop window: what was answered, and the CPU both sides used meanwhile. */
interface Window {
  latencies: number[];
  statuses: Record<string, number>;
  unexpected: number;
  elapsed: number;
  clientCpuSeconds: number;
  serverCpuSeconds: number | null;
}

async function closedLoop(pool: LeanConnection[], options: TimedLoadOptions, seconds: number): Promise<Window> {
  const { origin, spec, expectStatus } = options;
  const bytes = requestBytes(origin, spec);
  const counterAt = options.newBodies ? bytes.lastIndexOf(BODY_COUNTER) : -1;
  if (options.newBodies && counterAt === -1) throw new Error(`newBodies: the body holds no ${BODY_COUNTER}`);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let unexpected = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async (connection: LeanConnection) => {
    while (performance.now() < deadline) {
      try {
        const request = nextBody(bytes, counterAt);
        const sent = performance.now();
        const { status } = await connection.send(request);
        latencies.push(performance.now() - sent);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status !== expectStatus) unexpected++;
      } catch {
        statuses.error = (statuses.error ?? 0) + 1;
        unexpected++;
      }
    }
  };
  const cpuBefore = process.cpuUsage();
  const serverBefore = options.serverPid ? processCpuSeconds(options.serverPid) : null;
  const started = performance.now();
  await Promise.all(pool.map(worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = options.serverPid ? processCpuSeconds(options.serverPid) : null;
  return {
    latencies,
    statuses,
    unexpected,
    elapsed,
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    serverCpuSeconds: serverBefore !== null && serverAfter !== null ? serverAfter - serverBefore : null,
  };
}

function summarise(windows: Window[], connections: number): LoadResult {
  const latencies = windows.flatMap((w) => w.latencies);
  const statuses: Record<string, number> = {};
  for (const w of windows) for (const [status, n] of Object.entries(w.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  const seconds = windows.reduce((sum, w) => sum + w.elapsed, 0);
  const serverCpu = windows.every((w) => w.serverCpuSeconds !== null) ? windows.reduce((sum, w) => sum + w.serverCpuSeconds!, 0) : null;
  return {
    ...stats(latencies),
    connections,
    seconds,
    rps: latencies.length / seconds,
    unexpected: windows.reduce((sum, w) => sum + w.unexpected, 0),
    statuses,
    clientCpuPct: (windows.reduce((sum, w) => sum + w.clientCpuSeconds, 0) / seconds) * 100,
    serverCpuPct: serverCpu === null ? null : (serverCpu / seconds) * 100,
  };
}

/** Closed loop for a fixed time: warm-up (not recorded), then the measured window. */
export async function timedLoad(options: TimedLoadOptions): Promise<LoadResult> {
  return (await alternatingLoad([options], 1))[0]!;
}

/**
 * Several targets measured in turns: after each one's warm-up, `rounds` rounds in which every target gets
 * seconds / rounds of closed loop (in reversed order every other round), each on its own kept-alive
 * connections. Load from other jobs on the machine that comes and goes then weighs on all targets alike,
 * which one window each, back to back, does not ensure.
 */
export async function alternatingLoad(targets: TimedLoadOptions[], rounds: number): Promise<LoadResult[]> {
  const pools = targets.map((t) => Array.from({ length: t.connections }, () => new LeanConnection(t.origin)));
  try {
    for (const [i, t] of targets.entries()) if (t.warmupSeconds > 0) await closedLoop(pools[i]!, t, t.warmupSeconds);
    const windows: Window[][] = targets.map(() => []);
    for (let round = 0; round < rounds; round++) {
      const order = targets.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) windows[i]!.push(await closedLoop(pools[i]!, targets[i]!, targets[i]!.seconds / rounds));
    }
    return windows.map((w, i) => summarise(w, targets[i]!.connections));
  } finally {
    for (const connection of pools.flat()) connection.close();
  }
}

/** Closed loop over a fixed list of requests (each sent once), `connections` at a time. */
export async function fixedLoad(
  origin: URL,
  specs: RequestSpec[],
  connections: number,
  serverPid?: number,
): Promise<{ replies: Reply[]; seconds: number; clientCpuPct: number; serverCpuPct: number | null }> {
  const agent = newAgent(connections);
  const replies: Reply[] = new Array(specs.length);
  let next = 0;
  const worker = async () => {
    while (next < specs.length) {
      const index = next++;
      try {
        replies[index] = await send(agent, origin, specs[index]!);
      } catch (error) {
        replies[index] = { status: 0, headers: {}, body: Buffer.from(String(error)), ms: NaN };
      }
    }
  };
  const cpuBefore = process.cpuUsage();
  const serverBefore = serverPid ? processCpuSeconds(serverPid) : null;
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.min(connections, specs.length) }, worker));
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = serverPid ? processCpuSeconds(serverPid) : null;
  return {
    replies,
    seconds,
    clientCpuPct: ((cpu.user + cpu.system) / 1e6 / seconds) * 100,
    serverCpuPct: serverBefore !== null && serverAfter !== null ? ((serverAfter - serverBefore) / seconds) * 100 : null,
  };
}
