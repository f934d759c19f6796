// x402-ai-admin as an operator runs it: a subprocess against a sandbox gateway with payments in its ledger,
// the token from the environment or a file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestService } from './support/service.ts';
import { fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { payEvm, type PaidCallResult } from './support/paid-call.ts';
import { formatUsdc } from '../src/client/usdc.ts';
import type { RunningService } from '../src/service.ts';

const run = promisify(execFile);
const CLI = new URL('../src/client/admin-cli.ts', import.meta.url).pathname;
const TOKEN_ENV = 'X402_TEST_ADMIN_CLI_TOKEN';
const TOKEN = 'cli-admin-token-fedcba9876543210';

let service: RunningService;
let workDir: string;
const paid: PaidCallResult[] = [];

before(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  service = await startTestService({ networks: ['base'], config: { adminTokenEnv: TOKEN_ENV } });
  workDir = mkdtempSync(join(tmpdir(), 'x402-admin-cli-'));
  const buyer = await fundedEvmBuyer(service, ['base']);
  paid.push(await payEvm(`${service.url}/api/v1/ai/images`, { prompt: 'a harbour', size: '256x256' }, buyer));
  paid.push(await payEvm(`${service.url}/api/v1/ai/tts`, { text: 'Good evening', voice: 'en-us' }, buyer));
  paid.push(await payEvm(`${service.url}/api/v1/ai/images`, { prompt: 'a lighthouse', size: '256x256' }, buyer));
});
after(async () => {
  await service?.stop();
  rmSync(workDir, { recursive: true, force: true });
  delete process.env[TOKEN_ENV];
});

async function cli(args: string[], env: Record<string, string> = { X402_ADMIN_TOKEN: TOKEN }): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base.X402_ADMIN_TOKEN;
  delete base.ADMIN_TOKEN;
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--url', service.url], { env: { ...base, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

test('payments: a table, newest first, amounts in exact USDC; filters; --json', async () => {
  const { code, stdout, stderr } = await cli(['payments']);
  assert.equal(code, 0, stderr);
  const lines = stdout.trim().split('\n');
  assert.match(lines[0]!, /^created \(UTC\)\s+state\s+network\s+model\s+USDC\s+payer\s+transaction$/);
  assert.equal(lines.length, 4);
  paid
    .slice()
    .reverse()
    .forEach((payment, index) => {
      const line = lines[index + 1]!;
      assert.ok(line.includes(payment.transaction), line);
      assert.ok(line.includes(payment.model), line);
      assert.match(line, new RegExp(`\\s${formatUsdc(BigInt(payment.amount)).replace('.', '\\.')}\\s`), line);
      assert.match(line, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\s+settled\s+base\s/);
    });

  const images = await cli(['payments', '--model', 'preview-image', '--json']);
  assert.equal(images.code, 0, images.stderr);
  const page = JSON.parse(images.stdout) as { payments: { model: string; amount: string }[]; nextCursor: string | null };
  assert.deepEqual(page.payments.map((p) => p.model), ['preview-image', 'preview-image']);
  assert.equal(page.nextCursor, null);
});

test('payments --limit pages with --cursor', async () => {
  const first = await cli(['payments', '--limit', '2']);
  assert.equal(first.code, 0, first.stderr);
  const cursor = /^more: --cursor (\S+)$/m.exec(first.stdout)?.[1];
  assert.ok(cursor, first.stdout);
  const second = await cli(['payments', '--limit', '2', '--cursor', cursor]);
  assert.equal(second.code, 0, second.stderr);
  assert.ok(second.stdout.includes(paid[0]!.transaction));
  assert.doesNotMatch(second.stdout, /^more:/m);
});

test('revenue: per day, network and model, with exact totals; token from --token-file', async () => {
  const tokenFile = join(workDir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const { code, stdout, stderr } = await cli(['revenue', '--token-file', tokenFile], {});
  assert.equal(code, 0, stderr);
  const total = paid.reduce((sum, p) => sum + BigInt(p.amount), 0n);
  const images = paid.filter((p) => p.model === 'preview-image').reduce((sum, p) => sum + BigInt(p.amount), 0n);
  assert.match(stdout, /^day \(UTC\)\s+network\s+model\s+count\s+USDC$/m);
  assert.match(stdout, new RegExp(`^\\d{4}-\\d{2}-\\d{2}\\s+base\\s+preview-image\\s+2\\s+${formatUsdc(images).replace('.', '\\.')}$`, 'm'));
  assert.match(stdout, new RegExp(`^total\\s+base\\s+3\\s+${formatUsdc(total).replace('.', '\\.')}$`, 'm'));
  const json = await cli(['revenue', '--json', '--from', '2000-01-01']);
  assert.equal(JSON.parse(json.stdout).totals[0].amount, total.toString());
  const none = await cli(['revenue', '--from', '2100-01-01']);
  assert.equal(none.stdout.trim(), 'no settled payments');
});

test('exit codes: 2 for usage errors (no token, unknown command, stray option), 1 when the gateway refuses', async () => {
  const noToken = await cli(['payments'], {});
  assert.equal(noToken.code, 2);
  assert.match(noToken.stderr, /X402_ADMIN_TOKEN/);
  assert.equal((await cli(['refunds'])).code, 2);
  assert.equal((await cli(['revenue', '--state', 'settled'])).code, 2);
  const wrong = await cli(['payments'], { X402_ADMIN_TOKEN: 'wrong-token-0000000000' });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /401/);
  assert.equal(wrong.stderr.includes('wrong-token'), false, 'the token is never printed');
  const invalid = await cli(['payments', '--state', 'lost']);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /400.*state/);
  const fallback = await cli(['payments', '--limit', '1'], { ADMIN_TOKEN: TOKEN });
  assert.equal(fallback.code, 0, 'ADMIN_TOKEN works too');
  // a token a header cannot carry, a token file that is not there: usage errors, the token never quoted
  const broken = await cli(['payments'], { X402_ADMIN_TOKEN: 'SECRETPART1\nSECRETPART2' });
  assert.equal(broken.code, 2);
  assert.equal(broken.stderr.includes('SECRETPART'), false, broken.stderr);
  const missing = await cli(['payments', '--token-file', '/nonexistent/token']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read the admin token from \/nonexistent\/token \(ENOENT\)/);
});
