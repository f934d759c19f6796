// The service's log as `npm start` writes it: JSON lines for machines (stdout a pipe, the default), readable
// lines for a person (LOG_FORMAT=pretty, or a terminal), and in sandbox mode a banner that cannot be missed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** Runs the service in sandbox mode (base only) until its startup log is complete; returns stdout. */
async function startupLog(env: Record<string, string>, complete: (stdout: string) => boolean): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'x402-logs-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ port: 0, host: '127.0.0.1', dataDir: join(dir, 'data'), sandbox: { enabled: true, networks: ['base'] } }));
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH, CONFIG_FILE: file, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (complete(stdout)) child.kill('SIGTERM');
  });
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  return stdout;
}

test('JSON by default when stdout is not a terminal: every line parses, the sandbox warning is one of them', async () => {
  const stdout = await startupLog({}, (out) => out.includes('"banner":"sandbox"'));
  const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const banner = lines.find((line) => line.banner === 'sandbox')!;
  assert.equal(banner.level, 40);
  assert.match(String(banner.msg), /^SANDBOX MODE: .*no real funds move/);
  assert.match(String((banner.networks as Record<string, string>).base), /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(lines.some((line) => line.msg === 'service listening'));
});

test('LOG_FORMAT=pretty: readable lines, and the sandbox banner boxed', async () => {
  const stdout = await startupLog({ LOG_FORMAT: 'pretty' }, (out) => /└─+┘\n/.test(out));
  const lines = stdout.trimEnd().split('\n');
  assert.ok(lines.every((line) => !line.startsWith('{')), 'no JSON lines');
  assert.ok(lines.some((line) => /^\d\d:\d\d:\d\d\.\d{3} INFO  service listening url=http:\/\/127\.0\.0\.1:\d+ mode=sandbox/.test(line)));
  const top = lines.findIndex((line) => /^┌─+┐$/.test(line));
  assert.ok(top > 0);
  assert.match(lines[top - 1]!, /^\d\d:\d\d:\d\d\.\d{3} WARN $/);
  assert.match(lines[top + 1]!, /^│ SANDBOX MODE: payments use local test chains and test USDC; no real funds/);
  assert.ok(lines.slice(top).some((line) => /^│   base +http:\/\/127\.0\.0\.1:\d+ +│$/.test(line)));
  assert.ok(lines.slice(top).some((line) => /^└─+┘$/.test(line)));
});
