// Starts the real service for a test: a fresh data dir, a free port on 127.0.0.1, quiet logs,
// and sandbox chains for just the networks the test needs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { startService, type RunningService } from '../../src/service.ts';
import type { NetworkName } from '../../src/x402/networks.ts';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export async function startTestService(
  options: { networks?: NetworkName[]; config?: Record<string, unknown>; env?: Record<string, string>; log?: Logger } = {},
): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-gateway-test-'));
  const config = loadConfig(options.env ?? {}, {
    host: '127.0.0.1',
    port: 0,
    dataDir,
    logLevel: 'silent',
    // each test's chains are fresh: nothing to keep in its throwaway data dir
    sandbox: { enabled: true, networks: options.networks ?? ['base'], keepState: false },
    ...options.config,
  });
  const service = await startService(config, options.log ? { log: options.log } : {});
  const stop = service.stop;
  return {
    ...service,
    stop: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A logger at `level` whose lines a test reads back (parsed), for tests of what is and is not logged. */
export function capturedLogger(level: 'debug' | 'info' = 'debug'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
