// scripts/mcp-example.ts as a user runs it against a sandbox gateway: it lists the MCP tools and pays for one chat
// through x402's MCP transport, with a key from the environment (EVM or Solana) or a fresh one from the faucet.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { getBase58Decoder } from '@solana/kit';
import { startTestService } from './support/service.ts';
import { balanceOf, fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import { parseUsdc } from '../src/client/usdc.ts';
import type { RunningService } from '../src/service.ts';

const run = promisify(execFile);
const SCRIPT = new URL('../scripts/mcp-example.ts', import.meta.url).pathname;
let service: RunningService;

before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
});
after(() => service.stop());

async function example(network: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(process.execPath, [SCRIPT, '--url', service.url, '--network', network, 'Hello there'], {
    env: { ...process.env, X402_EVM_PRIVATE_KEY: '', X402_SOLANA_SECRET_KEY: '', ...env },
  });
  return stdout;
}

/** the amount and transaction of the script's "paid ..." line */
function paidLine(stdout: string): { amount: string; transaction: string } {
  const match = /paid ([\d.]+) USDC on \S+ · tx (\S+)/.exec(stdout);
  assert.ok(match, stdout);
  return { amount: match[1]!, transaction: match[2]! };
}

test('with an EVM key from the environment: lists the tools and pays for one chat on base', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const stdout = await example('base', { X402_EVM_PRIVATE_KEY: buyer.key });
  for (const tool of ['chat', 'generate_image', 'text_to_speech', 'list_models']) assert.match(stdout, new RegExp(`^  ${tool} `, 'm'));
  assert.match(stdout, /^chat: \S/m);
  const { amount, transaction } = paidLine(stdout);
  assert.match(transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(await balanceOf(service, 'base', buyer.address), 10_000_000n - parseUsdc(amount), 'the buyer paid what the script printed');
});

test('with a Solana key from the environment: pays on solana', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const stdout = await example('solana', { X402_SOLANA_SECRET_KEY: getBase58Decoder().decode(buyer.secretKey) });
  const { amount } = paidLine(stdout);
  assert.equal(await balanceOf(service, 'solana', buyer.address), 10_000_000n - parseUsdc(amount), 'the buyer paid what the script printed');
});

test('without a key, against a sandbox gateway: a fresh buyer funded from the faucet pays', async () => {
  const stdout = await example('base');
  assert.match(stdout, /^sandbox buyer 0x[0-9a-fA-F]{40}, funded from the faucet$/m);
  paidLine(stdout);
});
