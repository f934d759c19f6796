// An MCP host adds the gateway by URL and connects: Claude Code (the pinned @anthropic-ai/claude-code), exactly as
// docs/mcp.md tells ("claude mcp add --transport http", then "claude mcp list", which connects to each server),
// with a HOME of its own and no traffic but to the gateway.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestService } from './support/service.ts';
import type { RunningService } from '../src/service.ts';

const CLAUDE = fileURLToPath(new URL('../node_modules/.bin/claude', import.meta.url));

let service: RunningService;
let home: string;
before(async () => {
  service = await startTestService({ networks: ['base'] });
  home = mkdtempSync(join(tmpdir(), 'claude-home-'));
});
after(async () => {
  await service?.stop();
  rmSync(home, { recursive: true, force: true });
});

const claude = async (...args: string[]) =>
  (
    await promisify(execFile)(CLAUDE, args, {
      cwd: home,
      timeout: 60_000,
      env: { PATH: process.env.PATH, HOME: home, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
    })
  ).stdout;

test('Claude Code adds /mcp as an HTTP MCP server and connects to it', async () => {
  const url = `${service.url}/mcp`;
  assert.match(await claude('mcp', 'add', '--transport', 'http', 'x402-ai', url), /Added HTTP MCP server x402-ai/);
  assert.match(await claude('mcp', 'list'), new RegExp(`x402-ai: ${url.replace(/[.]/g, '\\.')} \\(HTTP\\) - ✔ Connected`));
});
