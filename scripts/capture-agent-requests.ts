// node scripts/capture-agent-requests.ts: records what the real agent CLIs send, as the fixtures the replay tests
// send to the gateway (test/agent-replays.test.ts). Each pinned CLI (Claude Code, Codex; devDependencies) runs one
// tool loop offline against a local server speaking its vendor's protocol (test/support/cli-upstream.ts): "read
// this file and tell me what it says", so it sends its first request, then a second turn carrying the tool call
// and its result. Each run's requests (path, the headers that say which client and protocol, body) are written to
// test/fixtures/agents/<client>-<model>.json; the temporary project path is written as PROJECT_DIR.
// Run again after updating a CLI, then run the replay tests.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCliUpstream } from '../test/support/cli-upstream.ts';
import { CLAUDE_CODE_VERSION, CODEX_VERSION, runClaudeCode, runCodex } from '../test/support/agent-clis.ts';

const OUT = join(import.meta.dirname, '..', 'test', 'fixtures', 'agents');
export const PROJECT_DIR = '/tmp/agent-project';
/** the headers kept: which client, which protocol version and betas (never a key) */
const KEPT_HEADERS = ['content-type', 'accept', 'user-agent', 'anthropic-version', 'anthropic-beta', 'x-app', 'originator'];

/** model names as each CLI is pointed at them: a gateway model id, and the vendor's own names, which change what the CLI sends */
const RUNS = [
  { client: 'claude-code', version: CLAUDE_CODE_VERSION, model: 'local/demo-bigram' },
  { client: 'claude-code', version: CLAUDE_CODE_VERSION, model: 'claude-sonnet-4-5' },
  { client: 'codex', version: CODEX_VERSION, model: 'local/demo-bigram' },
  { client: 'codex', version: CODEX_VERSION, model: 'gpt-5.5' },
  { client: 'codex', version: CODEX_VERSION, model: 'gpt-6.2-sol' },
] as const;

mkdirSync(OUT, { recursive: true });
for (const { client, version, model } of RUNS) {
  const project = mkdtempSync(join(tmpdir(), 'agent-project-'));
  const file = join(project, 'notes.txt');
  writeFileSync(file, 'The secret word is PELICAN.\n');
  const upstream = await startCliUpstream(file);
  try {
    const prompt = `Read ${file} and tell me the secret word.`;
    const result =
      client === 'claude-code'
        ? await runClaudeCode({ baseURL: upstream.baseURL, model, prompt, cwd: project })
        : await runCodex({ baseURL: `${upstream.baseURL}/v1`, model, prompt, cwd: project });
    const requests = upstream.captured.map(({ path, headers, body }) => ({
      path,
      headers: Object.fromEntries(KEPT_HEADERS.flatMap((name) => (headers[name] === undefined ? [] : [[name, headers[name]]]))),
      body,
    }));
    const fixture = JSON.stringify({ client, version, model, requests }).replaceAll(project, PROJECT_DIR);
    const name = `${client}-${model.replace(/[^a-z0-9.-]+/gi, '_')}.json`;
    writeFileSync(join(OUT, name), `${fixture}\n`);
    console.log(`${name}: ${requests.length} requests (${requests.map((request) => JSON.stringify(request.body).length).join(', ')} bytes), exit ${result.code}`);
  } finally {
    await upstream.close();
    rmSync(project, { recursive: true, force: true });
  }
}
