// The real agent CLIs, pinned as devDependencies, run as a user runs them but offline and sealed off: Claude Code
// (`claude -p`) and Codex (`codex exec`), each with a temporary home (their state, settings and sessions land
// there), telemetry and every non-essential request off, and a dummy key; pointed at `baseURL`, which serves
// Anthropic's (Claude Code) or OpenAI's Responses (Codex) protocol.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const CLAUDE_CODE_VERSION = (require('@anthropic-ai/claude-code/package.json') as { version: string }).version;
export const CODEX_VERSION = (require('@openai/codex/package.json') as { version: string }).version;

export interface CliRun {
  /** what the CLI printed on stdout */
  stdout: string;
  stderr: string;
  code: number | null;
}

function run(command: string, args: string[], env: Record<string, string>, cwd: string, timeoutMs: number): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ stdout, stderr, code: error ? ((error as { code?: number }).code ?? 1) : 0 });
    });
    child.stdin?.end();
  });
}

/** the environment a sealed CLI runs with: no proxy, no inherited keys, only what it needs */
function sealedEnv(home: string, extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1', ...extra };
}

/**
 * `claude -p prompt` against `baseURL` (ANTHROPIC_BASE_URL), as model `model`; its JSON result (the last
 * message's text in `result`). `cwd` is the project it works in.
 */
export async function runClaudeCode(options: { baseURL: string; model: string; prompt: string; cwd: string; maxTurns?: number; timeoutMs?: number }): Promise<CliRun> {
  const home = mkdtempSync(join(tmpdir(), 'claude-home-'));
  try {
    const env = sealedEnv(home, {
      ANTHROPIC_BASE_URL: options.baseURL,
      ANTHROPIC_API_KEY: 'sk-ant-not-a-real-key',
      ANTHROPIC_MODEL: options.model,
      ANTHROPIC_SMALL_FAST_MODEL: options.model,
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    });
    const args = ['-p', options.prompt, '--output-format', 'json', '--max-turns', String(options.maxTurns ?? 4)];
    return await run(require.resolve('@anthropic-ai/claude-code/bin/claude.exe'), args, env, options.cwd, options.timeoutMs ?? 120_000);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * `codex exec prompt` against `baseURL` (a custom provider in CODEX_HOME/config.toml, wire_api "responses"), as
 * model `model`; the last message is on stdout. `cwd` is the project it works in (read-only sandbox).
 */
export async function runCodex(options: { baseURL: string; model: string; prompt: string; cwd: string; timeoutMs?: number }): Promise<CliRun> {
  const home = mkdtempSync(join(tmpdir(), 'codex-home-'));
  try {
    writeFileSync(
      join(home, 'config.toml'),
      [
        `model = ${JSON.stringify(options.model)}`,
        'model_provider = "gateway"',
        '',
        '[model_providers.gateway]',
        'name = "gateway"',
        `base_url = ${JSON.stringify(options.baseURL)}`,
        'env_key = "GATEWAY_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    const env = sealedEnv(home, { CODEX_HOME: home, GATEWAY_KEY: 'not-a-real-key' });
    const args = [require.resolve('@openai/codex/bin/codex.js'), 'exec', '--skip-git-repo-check', options.prompt];
    return await run(process.execPath, args, env, options.cwd, options.timeoutMs ?? 120_000);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
