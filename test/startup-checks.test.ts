// Misconfiguration stops startup with one readable message naming every bad setting, and never a secret or a
// stack trace; /readyz says which dependency is down while /healthz stays liveness only. The real entry point
// (src/main.ts) is run as an operator runs it: a config file, environment variables, its exit code and stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { unusedPort } from './support/ports.ts';
import { startTestService } from './support/service.ts';
import { startChildService } from './support/child-service.ts';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const EVM_KEY = generatePrivateKey();
const PAY_TO = privateKeyToAccount(generatePrivateKey()).address;
const SOLANA_PAY_TO = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** Runs `npm start` with this config file and environment until it exits (a refused config) or listens. */
async function start(config: Record<string, unknown>, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'x402-startup-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ port: 0, dataDir: join(dir, 'data'), ...config }));
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH, CONFIG_FILE: file, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('"service listening"')) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  rmSync(dir, { recursive: true, force: true });
  return { code, stderr, stdout };
}

const localEvm = (rpcUrl: string) => ({ type: 'local', rpcUrl, secretKeyEnv: 'BASE_KEY' });

test("the README's placeholder payTo, the zero address, a bad checksum and a bad Solana key are all named in one message", async () => {
  const { code, stderr, stdout } = await start(
    {
      port: 'not a port',
      networks: {
        base: { payTo: '0x…', facilitator: localEvm('http://127.0.0.1:9') },
        polygon: { payTo: '0x0000000000000000000000000000000000000000', facilitator: localEvm('http://127.0.0.1:9') },
        'base-sepolia': { payTo: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96044', facilitator: localEvm('http://127.0.0.1:9') },
        solana: { payTo: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', facilitator: { type: 'local', rpcUrl: 'http://127.0.0.1:9', secretKeyEnv: 'SOL_KEY' } },
      },
    },
    { BASE_KEY: EVM_KEY },
  );
  assert.equal(code, 2);
  assert.doesNotMatch(stdout, /service listening/);
  assert.match(stderr, /invalid configuration \(5 problems\)/);
  assert.match(stderr, /port: /);
  assert.match(stderr, /networks\.base\.payTo "0x…" is not an EVM address/);
  assert.match(stderr, /networks\.polygon\.payTo is the zero address/);
  assert.match(stderr, /networks\.base-sepolia\.payTo .* fails its EIP-55 checksum/);
  assert.match(stderr, /networks\.solana\.payTo .* is not a Solana address/);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
});

test('sandbox chains beside live networks: startup refuses, naming both settings', async () => {
  const { code, stderr, stdout } = await start(
    { networks: { polygon: { payTo: PAY_TO, facilitator: localEvm('http://127.0.0.1:9') } } },
    { BASE_KEY: EVM_KEY, SANDBOX_NETWORKS: 'polygon' },
  );
  assert.equal(code, 2);
  assert.doesNotMatch(stdout, /service listening|SANDBOX MODE/);
  assert.match(stderr, /SANDBOX_NETWORKS .*`networks` configures live rails \(polygon\)/);
  const fromFile = await start({ sandbox: { enabled: true, networks: ['base'] }, networks: { base: { payTo: PAY_TO, facilitator: localEvm('http://127.0.0.1:9') } } }, { BASE_KEY: EVM_KEY });
  assert.equal(fromFile.code, 2);
  assert.match(fromFile.stderr, /sandbox\.enabled .*`networks` configures live rails \(base\)/);
});

test('a malformed Solana fee-payer secret is reported without any part of its value, whatever its form', async () => {
  const secrets = [
    '[12,34,56,"Qx7ZpKw9Rt",78]',
    '4wBqpZM9xaSheZzJSMawUKKwhdpChKbZ5eu5ky4Vigw0OlIl',
  ];
  for (const secret of secrets) {
    const { code, stderr, stdout } = await start(
      { networks: { solana: { payTo: SOLANA_PAY_TO, facilitator: { type: 'local', rpcUrl: 'http://127.0.0.1:9', secretKeyEnv: 'SOL_KEY' } } } },
      { SOL_KEY: secret },
    );
    assert.equal(code, 2, stderr);
    assert.match(stderr, /networks\.solana: the solana fee-payer secret is not a Solana keypair/);
    for (const output of [stderr, stdout]) {
      // no run of 6 characters of the secret (beyond its punctuation) appears anywhere
      for (let i = 0; i + 6 <= secret.length; i++) {
        const part = secret.slice(i, i + 6);
        if (/[A-Za-z0-9]{6}/.test(part)) assert.ok(!output.includes(part), `"${part}" of the secret was printed: ${output}`);
      }
    }
  }
});

test("the operator's tokens are secrets too: named in the one message with a missing key, before the ledger is opened", async () => {
  const { code, stderr } = await start({ networks: { base: { payTo: PAY_TO, facilitator: localEvm('http://127.0.0.1:9') } } }, {
    ADMIN_TOKEN: 'short-token',
    METRICS_TOKEN: 'has a space in it, long enough',
    DATABASE_URL: `postgres://gateway:hunter2secret@127.0.0.1:${await unusedPort()}/ledger`,
  });
  assert.equal(code, 2, stderr);
  assert.match(stderr, /invalid configuration \(3 problems\)/);
  assert.match(stderr, /networks\.base: .*BASE_KEY/);
  assert.match(stderr, /ADMIN_TOKEN \(or ADMIN_TOKEN_FILE\) must hold at least 16 printable characters/);
  assert.match(stderr, /METRICS_TOKEN \(or METRICS_TOKEN_FILE\) must hold at least 16 printable characters/);
  assert.doesNotMatch(stderr, /short-token|has a space|PostgreSQL/);
});

test('an unreachable PostgreSQL stops startup with a clear message (no password, no stack trace)', async () => {
  const port = await unusedPort();
  const { code, stderr } = await start({ networks: { base: { payTo: PAY_TO, facilitator: localEvm('http://127.0.0.1:9') } } }, {
    BASE_KEY: EVM_KEY,
    DATABASE_URL: `postgres://gateway:hunter2secret@127.0.0.1:${port}/ledger`,
  });
  assert.equal(code, 2);
  assert.match(stderr, new RegExp(`cannot use the PostgreSQL ledger at 127\\.0\\.0\\.1:${port}/ledger .*connection refused`));
  assert.doesNotMatch(stderr, /hunter2secret|\n\s+at /);
});

test('an unreachable RPC: the service starts, logs one readable line per network, and /readyz answers 503 naming it', async () => {
  const rpcUrl = `http://127.0.0.1:${await unusedPort()}`;
  const service = await startChildService(
    { networks: { base: { payTo: PAY_TO, facilitator: localEvm(rpcUrl) } } },
    { BASE_KEY: EVM_KEY },
  );
  try {
    const ready = await fetch(`${service.url}/readyz`);
    assert.equal(ready.status, 503);
    const report = (await ready.json()) as { status: string; chains: Record<string, { status: string; error?: string }>; ledger: { status: string }; unavailable: string[] };
    assert.equal(report.status, 'not_ready');
    assert.equal(report.chains.base!.status, 'down');
    assert.equal(report.ledger.status, 'ok');
    assert.deepEqual(report.unavailable.sort(), ['chat', 'image', 'speech']);
    assert.equal((await fetch(`${service.url}/healthz`)).status, 200, 'liveness is not readiness');
    const line = await waitFor(() => service.logs.find((log) => String(log.msg).includes('could not check that base is ready')));
    assert.equal(line.err, undefined, 'no error object (and so no stack) in the log line');
    assert.doesNotMatch(JSON.stringify(service.logs), /"stack"/);
  } finally {
    await service.stop();
  }
});

test('/readyz of a working sandbox gateway: 200 with every dependency ok and its latency', async () => {
  const service = await startTestService({ networks: ['base', 'solana'] });
  try {
    const response = await fetch(`${service.url}/readyz`);
    const report = (await response.json()) as { status: string; chains: Record<string, { status: string; latencyMs: number }>; ledger: { status: string }; media: { status: string } };
    assert.equal(response.status, 200, JSON.stringify(report));
    assert.equal(report.status, 'ready');
    assert.deepEqual(Object.keys(report.chains).sort(), ['base', 'solana']);
    for (const check of [...Object.values(report.chains), report.ledger, report.media]) {
      assert.equal(check.status, 'ok');
    }
    assert.equal(typeof report.chains.base!.latencyMs, 'number');
  } finally {
    await service.stop();
  }
});

async function waitFor<T>(find: () => T | undefined): Promise<T> {
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
