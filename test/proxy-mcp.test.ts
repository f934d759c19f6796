// `x402-ai mcp` as an MCP host runs it: the host's stdio client (the MCP SDK's, as Claude Desktop and
// `claude mcp add` start a local server) spawns it; the gateway's tools are listed without their network
// argument, a free tool is free, a paid tool is paid once under the caps (the chain agrees once the channel is
// refunded), and past a cap the host gets a tool error naming it, with nothing signed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { balanceOf, fundedEvmBuyerKey } from './support/sandbox-wallet.ts';
import { CLI, proxyTestBed, runCli } from './support/proxy-cli.ts';

const bed = proxyTestBed(['base']);

/** The host's side: `x402-ai mcp` spawned over stdio, as a host's config names it. */
async function host(args: string[], key: string): Promise<Client> {
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--gateway', bed.service().url, '--network', 'base', ...args],
    env: { ...(process.env as Record<string, string>), X402_EVM_PRIVATE_KEY: key },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

test('a paid tool called through x402-ai mcp is charged once; the free one is free', async () => {
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const spendFile = join(bed.dir(), 'paid.jsonl');
  const start = await balanceOf(bed.service(), 'base', buyer.address);
  const mcp = await host(['--spend-file', spendFile], buyer.key);
  let charged: bigint;
  try {
    const { tools } = await mcp.listTools();
    const chat = tools.find((tool) => tool.name === 'chat');
    assert.ok(chat, tools.map((tool) => tool.name).join(', '));
    assert.equal(chat.inputSchema.properties?.network, undefined, 'the bridge names the network, the host does not');

    const free = (await mcp.callTool({ name: 'list_models', arguments: {} })) as CallToolResult;
    assert.notEqual(free.isError, true);

    const paid = (await mcp.callTool({ name: 'chat', arguments: { model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 8 } })) as CallToolResult;
    assert.notEqual(paid.isError, true, JSON.stringify(paid.content));
    assert.equal(paid.content[0]?.type, 'text');
    const receipt = paid._meta?.['x402/payment-response'] as { success: boolean; extra: { chargedAmount: string } };
    assert.equal(receipt.success, true);
    charged = BigInt(receipt.extra.chargedAmount);
    assert.ok(charged > 0n);
  } finally {
    await mcp.close();
  }
  const account = JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout);
  assert.equal(account.calls, 1);
  assert.equal(account.perScheme['batch-settlement'].calls, 1);
  assert.equal(BigInt(account.spent.atomic), charged);
  assert.equal(BigInt(account.walletDrop.atomic), start - (await balanceOf(bed.service(), 'base', buyer.address)), 'the deposit is what left the wallet');

  // the bridge's channel refunded: the buyer is down the one charge
  const refund = await runCli(['proxy', '--refund', '--gateway', bed.service().url, '--network', 'base', '--spend-file', spendFile], { X402_EVM_PRIVATE_KEY: buyer.key });
  assert.equal(refund.code, 0, refund.stderr);
  assert.equal(start - (await balanceOf(bed.service(), 'base', buyer.address)), charged);
});

test('`claude mcp add` registers x402-ai mcp as written in docs/proxy.md, and Claude Code connects to it', async () => {
  const claude = new URL('../node_modules/@anthropic-ai/claude-code/bin/claude.exe', import.meta.url).pathname;
  const home = join(bed.dir(), 'claude-home');
  mkdirSync(home);
  const keyFile = join(bed.dir(), 'buyer.key');
  writeFileSync(keyFile, (await fundedEvmBuyerKey(bed.service(), ['base'])).key, { mode: 0o600 });
  const env = { PATH: process.env.PATH ?? '', HOME: home, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
  const run = promisify(execFile);
  const mcpArgs = ['mcp', '--gateway', bed.service().url, '--network', 'base', '--key-file', keyFile, '--max-total', '5', '--spend-file', join(bed.dir(), 'claude.jsonl')];
  await run(claude, ['mcp', 'add', 'x402-ai', '--', process.execPath, CLI, ...mcpArgs], { env, cwd: home });
  // `claude mcp list` starts each server and asks it to initialize
  const { stdout } = await run(claude, ['mcp', 'list'], { env, cwd: home });
  assert.match(stdout, /x402-ai: .* mcp --gateway .* - ✔ Connected/);
});

test('past a cap the host gets a tool error naming it, and nothing is signed', async () => {
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'base', buyer.address);
  const mcp = await host(['--spend-file', join(bed.dir(), 'capped.jsonl'), '--max-per-call', '0.0001'], buyer.key);
  try {
    const refused = (await mcp.callTool({ name: 'chat', arguments: { model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 8 } })) as CallToolResult;
    assert.equal(refused.isError, true);
    assert.match((refused.content[0] as { text: string }).text, /--max-per-call 0\.0001 USDC\); nothing was signed/);
  } finally {
    await mcp.close();
  }
  assert.equal(await balanceOf(bed.service(), 'base', buyer.address), start);
});
