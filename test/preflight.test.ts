// `npm run preflight -- --config <file>` run as an operator runs it, against a sandbox anvil standing in for a
// real chain: a good config passes with exit 0; a config with a wrong asset, a wrong EIP-712 domain, networks
// whose RPC is another chain and a key without gas gets every one of those findings printed, and exit 1. The same
// for Solana on a sandbox litesvm chain (genesis, mint, fee payer, payTo's token account) and a remote facilitator.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { generatePrivateKey } from 'viem/accounts';
import { startSvmSandbox, type SvmSandbox } from '../src/sandbox/svm/svm-sandbox.ts';
import { generateSvmKeypair } from '../src/sandbox/svm/keypair.ts';
import { LocalEvmFacilitator } from '../src/payments/facilitators/evm/local-evm.ts';
import { startFacilitatorServer } from './support/facilitator-server.ts';
import { unusedPort } from './support/ports.ts';

const PREFLIGHT = fileURLToPath(new URL('../src/preflight-main.ts', import.meta.url));
const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3'; // code, but no ERC-20 behind it
let chain: EvmSandbox;
let solana: SvmSandbox;
const dir = mkdtempSync(join(tmpdir(), 'x402-preflight-'));

before(async () => {
  chain = await startEvmSandbox(NETWORKS.base as EvmNetwork);
  solana = await startSvmSandbox(NETWORKS.solana as never);
});
after(async () => {
  await chain?.stop();
  await solana?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function preflight(config: Record<string, unknown>, name: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ dataDir: join(dir, name), ...config }));
  const child = spawn(process.execPath, [PREFLIGHT, '--config', file], {
    env: { PATH: process.env.PATH, BASE_KEY: chain.settlementPrivateKey, FEE_PAYER: JSON.stringify([...solana.feePayer.secretKey]), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

const local = () => ({ type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'BASE_KEY' });

test('a config whose chain, asset, key, ledger and media store are right is ready to go live (exit 0)', async () => {
  const { code, stdout, stderr } = await preflight({ networks: { base: { payTo: chain.payTo, facilitator: local() } } }, 'good');
  assert.equal(code, 0, stdout + stderr);
  assert.match(stdout, /ok {6}networks\.base: RPC is chain 8453/);
  assert.match(stdout, /ok {6}networks\.base: asset 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 is "USD Coin" version "2", 6 decimals/);
  assert.match(stdout, /ok {6}networks\.base: settlement key has gas/);
  assert.match(stdout, /ok {6}ledger: ledger \(SQLite\) answers a read/);
  assert.match(stdout, /ok {6}media: media store is writable/);
  assert.match(stdout, /^ready to go live \(0 warnings\)$/m);
  assert.doesNotMatch(stdout + stderr, new RegExp(chain.settlementPrivateKey.slice(2)), 'the key is never printed');
});

test('every fatal finding is printed, not only the first: a wrong asset and two networks whose RPC is another chain (exit 1)', async () => {
  const { code, stdout } = await preflight(
    {
      networks: {
        base: { payTo: chain.payTo, asset: PERMIT2, facilitator: local() },
        'base-sepolia': { payTo: chain.payTo, asset: chain.asset, eip712: { name: 'USD Coin', version: '1' }, facilitator: local() },
        polygon: { payTo: chain.payTo, facilitator: local() },
      },
    },
    'bad',
  );
  assert.equal(code, 1, stdout);
  assert.match(stdout, /FATAL {3}networks\.base: asset 0x000000000022D473030F116dDEE9F6B43aC78BA3 does not answer decimals\(\)/);
  assert.match(stdout, /FATAL {3}networks\.base-sepolia: RPC .* is chain 8453, not base-sepolia \(84532\)/);
  assert.match(stdout, /FATAL {3}networks\.polygon: RPC .* is chain 8453, not polygon \(137\)/);
  assert.match(stdout, /^not ready to go live: \d+ fatal findings/m);
});

test('the EIP-712 domain is compared with what the token answers', async () => {
  const { code, stdout } = await preflight(
    { networks: { base: { payTo: chain.payTo, eip712: { name: 'USDC', version: '2' }, facilitator: local() } } },
    'domain',
  );
  assert.equal(code, 1, stdout);
  assert.match(stdout, /FATAL {3}networks\.base: asset 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 is named "USD Coin" but the EIP-712 domain says "USDC"/);
});

test('a settlement key without gas, a missing secret and a malformed admin token are findings too', async () => {
  const { code, stdout } = await preflight(
    {
      networks: {
        base: { payTo: chain.payTo, facilitator: { type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'NO_GAS_KEY' } },
        polygon: { payTo: chain.payTo, facilitator: { type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'UNSET_KEY' } },
      },
    },
    'secret',
    { NO_GAS_KEY: generatePrivateKey(), ADMIN_TOKEN: 'too-short' },
  );
  assert.equal(code, 1, stdout);
  assert.match(stdout, /FATAL {3}config: ADMIN_TOKEN \(or ADMIN_TOKEN_FILE\) must hold at least 16 printable characters/);
  assert.doesNotMatch(stdout, /too-short/);
  assert.match(stdout, /FATAL {3}networks\.base: base: settlement account 0x[0-9a-fA-F]{40} has no native gas/);
  assert.match(stdout, /FATAL {3}config: networks\.polygon: secret UNSET_KEY is not set/);
  assert.match(stdout, /ok {6}media: media store is writable/, 'the other checks still run');
});

test('Solana: the RPC is the network, the mint has 6 decimals, the fee payer has SOL, payTo has its token account', async () => {
  const local = { type: 'local', rpcUrl: solana.rpcUrl, secretKeyEnv: 'FEE_PAYER' };
  const good = await preflight({ networks: { solana: { payTo: solana.payTo, facilitator: local } } }, 'solana-good');
  assert.equal(good.code, 0, good.stdout + good.stderr);
  assert.match(good.stdout, /ok {6}networks\.solana: RPC is solana; mint EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v has 6 decimals/);
  assert.match(good.stdout, /ok {6}networks\.solana: fee payer has SOL and payTo has its token account/);

  const stranger = (await generateSvmKeypair()).address;
  const bad = await preflight(
    { networks: { solana: { payTo: stranger, facilitator: local }, 'solana-devnet': { payTo: solana.payTo, facilitator: local } } },
    'solana-bad',
  );
  assert.equal(bad.code, 1, bad.stdout);
  assert.match(bad.stdout, new RegExp(`FATAL {3}networks\\.solana: solana: payTo ${stranger} has no associated token account`));
  assert.match(bad.stdout, /FATAL {3}networks\.solana-devnet: RPC .* is not solana-devnet/);
});

test('a remote facilitator must list exact for each network it is configured for', async () => {
  const facilitator = new LocalEvmFacilitator({
    network: NETWORKS.base as EvmNetwork,
    rpcUrl: chain.rpcUrl,
    settlementPrivateKey: chain.settlementPrivateKey,
    asset: chain.asset,
    eip712: chain.eip712,
    receiptTimeoutMs: 30_000,
  });
  const server = await startFacilitatorServer('base', facilitator, { versions: [2] });
  try {
    const remote = { type: 'remote', url: server.url };
    const { code, stdout } = await preflight({ networks: { base: { payTo: chain.payTo, facilitator: remote }, polygon: { payTo: chain.payTo, facilitator: remote } } }, 'remote');
    assert.equal(code, 1, stdout);
    assert.match(stdout, /ok {6}networks\.base: facilitator supports exact payments on base/);
    assert.match(stdout, /FATAL {3}networks\.polygon: facilitator .* does not support exact payments on polygon/);
  } finally {
    await server.stop();
  }
});

test('a config still in sandbox mode, and a database that cannot be reached, are fatal (the password never printed)', async () => {
  const { code, stdout } = await preflight({}, 'sandbox', { DATABASE_URL: 'postgres://gateway:s3cret-pass@127.0.0.1:9/ledger' });
  assert.equal(code, 1, stdout);
  assert.match(stdout, /FATAL {3}config: sandbox mode: no live networks are configured/);
  assert.match(stdout, /FATAL {3}ledger: cannot use the PostgreSQL ledger at 127\.0\.0\.1:9\/ledger/);
  assert.doesNotMatch(stdout, /s3cret-pass/);
});

test('an RPC that does not answer is one fatal finding for its network, found at once', async () => {
  const rpcUrl = `http://127.0.0.1:${await unusedPort()}`;
  const started = Date.now();
  const { code, stdout } = await preflight({ networks: { base: { payTo: chain.payTo, upto: 'off', facilitator: { ...local(), rpcUrl } } } }, 'down');
  assert.equal(code, 1, stdout);
  assert.match(stdout, /FATAL {3}networks\.base: RPC answers: down/);
  assert.match(stdout, /FATAL {3}networks\.base: RPC 127\.0\.0\.1:\d+ gives no chain id/);
  assert.doesNotMatch(stdout, /could not check that base is ready/, 'no second report of the same outage');
  assert.ok(Date.now() - started < 60_000);
});

test('a usage error names the missing flag first (exit 2)', async () => {
  const child = spawn(process.execPath, [PREFLIGHT], { env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 2);
  assert.match(stderr.split('\n')[0]!, /--config is required/);
});
