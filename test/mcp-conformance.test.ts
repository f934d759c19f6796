// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against a sandbox gateway's /mcp:
// both wires' lifecycle (2025-11-25 initialize and ping, tools/list), DNS-rebinding protection, and the 2026-07-28
// wire (stateless requests, server/discover, caching hints, Mcp-Method / Mcp-Name / Mcp-Param-* headers). Every
// check of each scenario must pass; the only ones it may skip are those about list-changed notifications, which
// this server does not claim (its lists are fixed for the process's life).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestService } from './support/service.ts';
import type { RunningService } from '../src/service.ts';

const CONFORMANCE = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'dns-rebinding-protection',
  'server-stateless',
  'caching',
  'http-header-validation',
  'http-custom-header-server-validation',
];
/** checks of capabilities the server does not declare: the suite skips them as not applicable */
const NOT_APPLICABLE = /^sep-2575-server-sends-(prompts|tools)-list-changed-on-subscription$/;

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

let service: RunningService;
let output: string;
before(async () => {
  service = await startTestService({ networks: ['base'] });
  output = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
});
after(async () => {
  await service?.stop();
  rmSync(output, { recursive: true, force: true });
});

/** One scenario's checks, from the checks.json the suite writes (its exit code alone would not name them). */
async function runScenario(scenario: string): Promise<Check[]> {
  const dir = join(output, scenario);
  await promisify(execFile)(process.execPath, [CONFORMANCE, 'server', '--url', `${service.url}/mcp`, '--scenario', scenario, '-o', dir], { timeout: 60_000 }).catch(
    (error: { stdout?: string }) => assert.fail(`conformance ${scenario} did not run to its end: ${String(error.stdout ?? error).slice(-2000)}`),
  );
  const [run] = readdirSync(dir);
  return JSON.parse(readFileSync(join(dir, run!, 'checks.json'), 'utf8')) as Check[];
}

test('every check of the official MCP conformance scenarios passes', async () => {
  const results = await Promise.all(SCENARIOS.map(async (scenario) => ({ scenario, checks: await runScenario(scenario) })));
  const problems = results.flatMap(({ scenario, checks }) => {
    assert.ok(checks.length > 0, `${scenario} ran no check`);
    return checks
      .filter((check) => !(check.status === 'SUCCESS' || check.status === 'INFO' || (check.status === 'SKIPPED' && NOT_APPLICABLE.test(check.id))))
      .map((check) => `${scenario}: ${check.id} ${check.status}: ${check.errorMessage ?? ''}`);
  });
  assert.deepEqual(problems, []);
});
