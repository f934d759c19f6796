// x402-ai's wallet, faucet and balance commands, run as a buyer runs them (a subprocess), against a sandbox
// gateway and a live one (a real chain behind a local facilitator), and how its errors read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestService } from './support/service.ts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { addressOfKey } from '../src/client/wallet.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

const run = promisify(execFile);
const CLI = new URL('../src/client/cli.ts', import.meta.url).pathname;

let sandboxGateway: RunningService;
let chain: EvmSandbox;
let liveGateway: RunningService;
let workDir: string;
before(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'x402-cli-wallet-'));
  [sandboxGateway, chain] = await Promise.all([startTestService({ networks: ['base'] }), startEvmSandbox(NETWORKS.base as EvmNetwork)]);
  process.env.CLI_WALLET_TEST_SETTLEMENT_KEY = chain.settlementPrivateKey;
  liveGateway = await startTestService({
    config: {
      sandbox: { enabled: false },
      networks: { base: { payTo: chain.payTo, asset: chain.asset, facilitator: { type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'CLI_WALLET_TEST_SETTLEMENT_KEY' } } },
    },
  });
});
after(async () => {
  delete process.env.CLI_WALLET_TEST_SETTLEMENT_KEY;
  await Promise.all([sandboxGateway?.stop(), liveGateway?.stop()]);
  await chain?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

async function cli(args: string[], url: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--url', url], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

test('wallet new prints a fresh key and its address, EVM or Solana; --json gives them as fields', async () => {
  const evm = await cli(['wallet', 'new'], sandboxGateway.url);
  assert.equal(evm.code, 0, evm.stderr);
  const key = /secret key +(0x[0-9a-f]{64})/.exec(evm.stdout)![1]! as `0x${string}`;
  assert.match(evm.stdout, new RegExp(`address +${privateKeyToAccount(key).address}`));
  const solana = JSON.parse((await cli(['wallet', 'new', '--network', 'solana', '--json'], sandboxGateway.url)).stdout);
  assert.equal(solana.family, 'svm');
  assert.equal(await addressOfKey('svm', solana.secretKey), solana.address);
  const again = JSON.parse((await cli(['wallet', 'new', '--json'], sandboxGateway.url)).stdout);
  assert.notEqual(again.secretKey, key);
});

test('wallet new --out saves the key readable by its owner only, never over an existing file', async () => {
  const file = join(workDir, 'buyer.key');
  const made = await cli(['wallet', 'new', '--out', file, '--json'], sandboxGateway.url);
  assert.equal(made.code, 0, made.stderr);
  const { address, secretKey } = JSON.parse(made.stdout);
  assert.equal(secretKey, undefined); // saved, not printed
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const saved = readFileSync(file, 'utf8');
  assert.equal(privateKeyToAccount(saved.trim() as `0x${string}`).address, address);

  const refused = await cli(['wallet', 'new', '--out', file], sandboxGateway.url);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^x402-ai: .*buyer\.key already exists: a key file is never overwritten/);
  assert.equal(readFileSync(file, 'utf8'), saved);
});

test('faucet against a live gateway: a clear refusal naming the address, and nothing asked of the chain', async () => {
  const file = join(workDir, 'live.key');
  await cli(['wallet', 'new', '--out', file], liveGateway.url);
  const address = await addressOfKey('evm', readFileSync(file, 'utf8').trim());
  const refused = await cli(['faucet', '--key-file', file], liveGateway.url);
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr.trim(), `x402-ai: the gateway at ${liveGateway.url} is live (real USDC): it has no faucet; fund ${address} with USDC on base yourself`);
  assert.equal(await chain.balanceOf(address as `0x${string}`), 0n);
});

test('faucet --amount funds a given address with that much test USDC; a malformed amount is a usage error', async () => {
  const address = privateKeyToAccount(`0x${'33'.repeat(32)}`).address;
  const funded = await cli(['faucet', address, '--amount', '2.5'], sandboxGateway.url);
  assert.equal(funded.code, 0, funded.stderr);
  assert.equal(funded.stdout.trim(), `funded ${address} on base (sandbox): it holds 2.5 test USDC`);
  const malformed = await cli(['faucet', address, '--amount', 'lots'], sandboxGateway.url);
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /^x402-ai: --amount: /);
});

test('balance reads USDC and gas at --rpc-url, or at the sandbox chain the gateway reports; an address may be given', async () => {
  const address = privateKeyToAccount(`0x${'11'.repeat(32)}`).address;
  await chain.faucet(address, 5_250_000n);
  const live = await cli(['balance', address, '--rpc-url', chain.rpcUrl], liveGateway.url);
  assert.equal(live.code, 0, live.stderr);
  assert.match(live.stdout, new RegExp(`^${address} on base: 5\\.25 USDC, \\d+(\\.\\d+)? ETH`));
  const json = JSON.parse((await cli(['balance', address, '--rpc-url', chain.rpcUrl, '--json'], liveGateway.url)).stdout);
  assert.deepEqual([json.usdc, json.usdcAtomic, json.rpcUrl], ['5.25', '5250000', chain.rpcUrl]);
  // the sandbox gateway's own chain: a fresh address holds nothing there
  const sandbox = await cli(['balance', address], sandboxGateway.url);
  assert.match(sandbox.stdout, new RegExp(`^${address} on base: 0 USDC, 0 ETH`));
});

test('a payment the address cannot cover says how to check the balance and, in sandbox, where the faucet is', async () => {
  const file = join(workDir, 'empty.key');
  writeFileSync(file, `0x${'22'.repeat(32)}`);
  const unfunded = await cli(['chat', 'Hello', '--key-file', file], sandboxGateway.url);
  assert.equal(unfunded.code, 1);
  assert.match(unfunded.stderr, /insufficient_funds/);
  assert.match(unfunded.stderr, /x402-ai balance --network base --key-file/);
  assert.match(unfunded.stderr, /x402-ai faucet --network base --key-file/);
});

test('usage mistakes: the reason on the first line, then where the usage is; exit 2', async () => {
  const unknown = await cli(['bogus'], sandboxGateway.url);
  assert.equal(unknown.code, 2);
  assert.deepEqual(unknown.stderr.trim().split('\n'), ['x402-ai: unknown command "bogus"', '(x402-ai --help shows every command and option)']);
  const badOption = await cli(['chat', 'hi', '--bogus'], sandboxGateway.url);
  assert.equal(badOption.code, 2);
  assert.match(badOption.stderr, /^x402-ai: Unknown option '--bogus'/);
  const noKey = await cli(['balance'], sandboxGateway.url, { X402_EVM_PRIVATE_KEY: '' });
  assert.match(noKey.stderr, /^x402-ai: no key: set X402_EVM_PRIVATE_KEY or pass --key-file/);
});
