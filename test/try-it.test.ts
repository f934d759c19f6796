// docs/getting-started.md as a newcomer follows it: every shell line of "Pay from the shell", "On Solana" and
// "Pay from code" run as written (through sh, in the clone, with npx), against a sandbox gateway this test
// starts. Only the gateway's address (X402_AI_URL) and HOME (where the key files go) are the test's own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { exec } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestService } from './support/service.ts';
import type { RunningService } from '../src/service.ts';
import { parseUsdc } from '../src/client/usdc.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GUIDE = readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8');

/** the fenced blocks of one `##`/`###` section of the guide, by language */
function blocks(heading: string, language: string): string[] {
  const start = GUIDE.indexOf(`${heading}\n`);
  assert.ok(start >= 0, `the guide has a section "${heading}"`);
  const rest = GUIDE.slice(start + heading.length);
  const next = rest.search(/\n#{2,3} /); // the next heading ends the section
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
}

/** the command lines of a section's shell blocks */
const commands = (heading: string) => blocks(heading, 'sh').flatMap((block) => block.split('\n').filter((line) => line.trim() && !line.startsWith('#')));

let service: RunningService;
let home: string;
before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
  home = mkdtempSync(join(tmpdir(), 'x402-try-it-'));
});
after(async () => {
  await service.stop();
  rmSync(home, { recursive: true, force: true });
});

/** one line as a user's shell runs it, in the clone */
function shell(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    exec(line, { cwd: ROOT, env: { ...process.env, HOME: home, X402_AI_URL: service.url } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function runAll(lines: string[]): Promise<string[]> {
  const outputs: string[] = [];
  for (const line of lines) {
    const { code, stdout, stderr } = await shell(line);
    assert.equal(code, 0, `${line}\n${stdout}${stderr}`);
    assert.equal(stderr.trim(), '', `${line} printed to stderr: ${stderr}`); // no npm warnings, no noise
    outputs.push(stdout);
  }
  return outputs;
}

test('"Pay from the shell": a key, 100 test USDC, one paid chat, and the balance down by exactly its price', async () => {
  const lines = commands('## Pay from the shell');
  assert.deepEqual(lines.map((line) => line.split(' ')[2]), ['wallet', 'faucet', 'balance', 'chat', 'balance']);
  const [made, funded, before, chat, afterwards] = await runAll(lines);
  const address = /address (0x[0-9a-fA-F]{40})/.exec(made!)![1]!;
  assert.equal(statSync(join(home, 'x402-buyer.key')).mode & 0o777, 0o600);
  assert.match(funded!, new RegExp(`funded ${address} on base \\(sandbox\\): it holds 100 test USDC`));
  assert.match(before!, new RegExp(`${address} on base: 100 USDC, \\d+(\\.\\d+)? ETH`));
  const price = /paid (\d+(?:\.\d+)?) USDC on base, tx 0x[0-9a-f]{64}/.exec(chat!)![1]!;
  const left = /: (\d+(?:\.\d+)?) USDC/.exec(afterwards!)![1]!;
  assert.equal(parseUsdc(left), parseUsdc('100') - parseUsdc(price));
});

test('"On Solana": the same with a Solana key', async () => {
  const [made, funded, chat, balance] = await runAll(commands('### On Solana'));
  const address = /address ([1-9A-HJ-NP-Za-km-z]{32,44})/.exec(made!)![1]!;
  assert.match(funded!, new RegExp(`funded ${address} on solana \\(sandbox\\): it holds 100 test USDC`));
  assert.match(chat!, /paid \d+(\.\d+)? USDC on solana, tx [1-9A-HJ-NP-Za-km-z]{64,88}/);
  assert.match(balance!, new RegExp(`${address} on solana: \\d+(\\.\\d+)? USDC, \\d+(\\.\\d+)? SOL`));
});

test('"Pay from code": the snippet shown is examples/first-payment.mjs, and it pays as run', async () => {
  const [snippet] = blocks('## Pay from code', 'js');
  assert.equal(snippet, readFileSync(join(ROOT, 'examples/first-payment.mjs'), 'utf8'));
  const lines = commands('## Pay from code');
  assert.deepEqual(lines, ['node_modules/.bin/node examples/first-payment.mjs ~/x402-buyer.key']);
  const [printed] = await runAll(lines); // the key the shell section made and funded
  assert.match(printed!, /^200 \{/);
  assert.match(printed!, /paid, transaction 0x[0-9a-f]{64}/);
});
