// Starts the real service for a test: a fresh data dir, a free port on 127.0.0.1, quiet logs,
// and sandbox chains for just the networks the test needs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { startService, type RunningService } from '../../src/service.ts';
import type { NetworkName } from '../../src/x402/networks.ts';

export async function startTestService(
  options: { networks?: NetworkName[]; config?: Record<string, unknown>; env?: Record<string, string> } = {},
): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-gateway-test-'));
  const config = loadConfig(options.env ?? {}, {
    host: '127.0.0.1',
    port: 0,
    dataDir,
    logLevel: 'silent',
    sandbox: { enabled: true, networks: options.networks ?? ['base'] },
    ...options.config,
  });
  const service = await startService(config);
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
