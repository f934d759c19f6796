// The real coding agents through `x402-ai proxy` on the sandbox defaults: Claude Code (`claude -p`, the pinned
// @anthropic-ai/claude-code) and Codex (`codex exec`, the pinned @openai/codex), offline, telemetry off, a temporary
// home each, nothing set but their base URL and a dummy key: each names its vendor's default model, which the proxy
// sends as the gateway's chat model (X-Model-Substituted). Each completes a prompt, paid by vouchers; /stats equals
// what left the buyer's wallet, and once the proxy exits with --refund-on-exit the buyer is down exactly what /stats
// says was spent. And Claude Code as an MCP host: `x402-ai mcp` added with `claude mcp add`, its paid chat tool called
// and paid once; and Codex as one, its config.toml naming x402-ai mcp with its tools approved up front.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { balanceOf, fundedEvmBuyerKey } from './support/sandbox-wallet.ts';
import { CLI, proxyTestBed, runCli, startProxy, type RunningProxy } from './support/proxy-cli.ts';
import { startToolGateway, UP_TOOLS } from './support/tool-gateway.ts';
import type { RunningService } from '../src/service.ts';

const CLAUDE = new URL('../node_modules/@anthropic-ai/claude-code/bin/claude.exe', import.meta.url).pathname;
const CODEX = new URL('../node_modules/@openai/codex/bin/codex.js', import.meta.url).pathname;

const bed = proxyTestBed(['base']);

/** Runs an agent to its end (its stdin closed, as in CI): exit code and output. */
function runAgent(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A buyer, a proxy with --refund-on-exit, and the checks every agent's run ends with. */
async function paying(name: string, service: RunningService = bed.service()) {
  const buyer = await fundedEvmBuyerKey(service, ['base'], 5_000_000n);
  const start = await balanceOf(service, 'base', buyer.address);
  const spendFile = join(bed.dir(), `${name}.jsonl`);
  const proxy = await startProxy(['--gateway', service.url, '--network', 'base', '--spend-file', spendFile, '--refund-on-exit', '--verbose'], { X402_EVM_PRIVATE_KEY: buyer.key });
  const dropped = async () => start - (await balanceOf(service, 'base', buyer.address));
  return { proxy, spendFile, dropped };
}

async function checkAccount(proxy: RunningProxy, run: { code: number | null; stdout: string; stderr: string }, spendFile: string, dropped: () => Promise<bigint>) {
  const stats = (await (await fetch(`${proxy.url}/stats`)).json()) as any;
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n${proxy.stderr()}`);
  assert.ok(stats.calls >= 1, 'paid through the proxy');
  assert.equal(BigInt(stats.walletDrop.atomic), await dropped(), '/stats: what left the wallet');
  await proxy.stop();
  const account = JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout);
  assert.equal(account.channels.unspent.atomic, '0', 'refunded on exit');
  // a request the agent cancelled last on its channel (a side request, a background agent stopped) is settled by the refund's receipt
  assert.equal(account.pendingCalls, 0, 'every call settled');
  assert.equal(BigInt(account.spent.atomic), await dropped(), 'after the refund the buyer is down what was spent, to the atomic unit');
}

/** The buyer `x402-ai mcp` pays tools with (a key file and a spend file), and the check a host's run ends with. */
async function toolBuyer(name: string, service: RunningService) {
  const buyer = await fundedEvmBuyerKey(service, ['base'], 5_000_000n);
  const start = await balanceOf(service, 'base', buyer.address);
  const keyFile = join(bed.dir(), `${name}.key`);
  writeFileSync(keyFile, buyer.key, { mode: 0o600 });
  const spendFile = join(bed.dir(), `${name}.jsonl`);
  return {
    /** x402-ai mcp's arguments after its command */
    args: [CLI, 'mcp', '--gateway', service.url, '--network', 'base', '--key-file', keyFile, '--max-total', '1', '--spend-file', spendFile],
    /** the tool was paid once; after `x402-ai proxy --refund` the buyer is down what `x402-ai spend` says */
    async paidOnce() {
      const tools = JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout);
      assert.equal(tools.calls, 1, 'the tool paid once');
      assert.equal(tools.pendingCalls, 0);
      const refund = await runCli(['proxy', '--refund', '--gateway', service.url, '--network', 'base', '--spend-file', spendFile], { X402_EVM_PRIVATE_KEY: buyer.key });
      assert.equal(refund.code, 0, refund.stderr);
      assert.equal(start - (await balanceOf(service, 'base', buyer.address)), BigInt(tools.spent.atomic), 'the tool buyer is down exactly what x402-ai spend says');
    },
  };
}

test('Claude Code (claude -p) at its default model completes a prompt through the proxy', { timeout: 240_000 }, async () => {
  const { proxy, spendFile, dropped } = await paying('claude');
  const home = join(bed.dir(), 'claude-home');
  mkdirSync(home);
  try {
    const run = await runAgent(
      CLAUDE,
      // the sandbox model calls one of Claude Code's tools first (the gateway takes its whole request now), then answers
      // from the result: a prompt takes two turns
      ['-p', 'Reply with one short sentence about the sea.', '--output-format', 'json', '--max-turns', '3'],
      {
        HOME: home,
        ANTHROPIC_BASE_URL: proxy.url,
        ANTHROPIC_API_KEY: 'sk-ant-dummy',
        DISABLE_TELEMETRY: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      home,
    );
    const result = (() => {
      try {
        return JSON.parse(run.stdout) as { is_error?: boolean; result?: string };
      } catch {
        return {};
      }
    })();
    if (run.code === 0) assert.equal(result.is_error, false, run.stdout);
    await checkAccount(proxy, run, spendFile, dropped);
  } finally {
    await proxy.stop();
  }
});

test('Codex (codex exec) at its default model completes a prompt through the proxy', { timeout: 240_000 }, async () => {
  const { proxy, spendFile, dropped } = await paying('codex');
  const home = join(bed.dir(), 'codex-home');
  const work = join(bed.dir(), 'codex-work');
  mkdirSync(home);
  mkdirSync(work);
  // the provider as the proxy prints it (base URL, the Responses wire, no key needed), the model left at Codex's default
  writeFileSync(
    join(home, 'config.toml'),
    `model_provider = "x402"\n\n[model_providers.x402]\nname = "x402-ai proxy"\nbase_url = "${proxy.url}/v1"\nwire_api = "responses"\n`,
  );
  try {
    const run = await runAgent(process.execPath, [CODEX, 'exec', '--skip-git-repo-check', 'Reply with one short sentence about the sea.'], { HOME: work, CODEX_HOME: home, OPENAI_API_KEY: 'sk-dummy' }, work);
    await checkAccount(proxy, run, spendFile, dropped);
  } finally {
    await proxy.stop();
  }
});

test('Claude Code calls a paid tool of x402-ai mcp, added with `claude mcp add` as docs/proxy.md says: paid once, refunded to the atomic unit', { timeout: 240_000 }, async () => {
  // a gateway whose up/tools model calls the one tool that takes a prompt once, then answers (support/tool-upstream.ts)
  const gateway = await startToolGateway();
  const service = gateway.service;
  // the model through the proxy (one buyer), the tools through x402-ai mcp (another): each account checked on-chain
  const { proxy, spendFile, dropped } = await paying('claude-mcp-model', service);
  const home = join(bed.dir(), 'claude-mcp-home');
  mkdirSync(home);
  const tools = await toolBuyer('claude-mcp-tools', service);
  const env = { HOME: home, ANTHROPIC_BASE_URL: proxy.url, ANTHROPIC_API_KEY: 'sk-ant-dummy', DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
  try {
    const added = await runAgent(CLAUDE, ['mcp', 'add', 'x402-ai', '--', process.execPath, ...tools.args], env, home);
    assert.equal(added.code, 0, added.stderr);
    // the gateway's paid chat tool is the one tool listed (no built-ins, the other gateway tools left out), loaded
    // up front rather than behind Claude Code's tool search
    const run = await runAgent(
      CLAUDE,
      [
        '-p', 'Ask the chat tool for one short sentence about the sea, then tell me what it said.',
        '--model', UP_TOOLS, '--output-format', 'stream-json', '--verbose', '--max-turns', '3', '--tools', '',
        '--allowedTools', 'mcp__x402-ai__chat',
        '--disallowedTools', 'mcp__x402-ai__generate_image', 'mcp__x402-ai__text_to_speech', 'mcp__x402-ai__list_models',
      ],
      { ...env, ENABLE_TOOL_SEARCH: 'false', CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '60000' },
      home,
    );
    const events = run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
    const results = events.flatMap((event) => (event.type === 'user' ? event.message.content : [])).filter((part: any) => part.type === 'tool_result');
    assert.equal(results.length, 1, run.stdout);
    assert.notEqual(results[0].is_error, true, JSON.stringify(results[0]));
    assert.equal(events.at(-1)?.subtype, 'success', run.stdout);

    await tools.paidOnce();
    await checkAccount(proxy, run, spendFile, dropped);
  } finally {
    await proxy.stop();
    await gateway.stop();
  }
});

test('Codex calls a paid tool of x402-ai mcp, configured as docs/proxy.md says: paid once, refunded to the atomic unit', { timeout: 240_000 }, async () => {
  const gateway = await startToolGateway();
  const service = gateway.service;
  const { proxy, spendFile, dropped } = await paying('codex-mcp-model', service);
  const home = join(bed.dir(), 'codex-mcp-home');
  const work = join(bed.dir(), 'codex-mcp-work');
  mkdirSync(home);
  mkdirSync(work);
  const tools = await toolBuyer('codex-mcp-tools', service);
  // the model through the proxy, the tools through x402-ai mcp, approved up front: `codex exec` asks no one
  writeFileSync(
    join(home, 'config.toml'),
    `model = "${UP_TOOLS}"\nmodel_provider = "x402"\n\n[model_providers.x402]\nname = "x402-ai proxy"\nbase_url = "${proxy.url}/v1"\nwire_api = "responses"\n\n` +
      `[mcp_servers.x402-ai]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify(tools.args)}\ndefault_tools_approval_mode = "approve"\n`,
  );
  try {
    const run = await runAgent(process.execPath, [CODEX, 'exec', '--json', '--skip-git-repo-check', 'Ask the chat tool for one short sentence about the sea, then tell me what it said.'], { HOME: work, CODEX_HOME: home, OPENAI_API_KEY: 'sk-dummy' }, work);
    const items = run.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>);
    const calls = items.filter((event) => event.type === 'item.completed' && event.item.type === 'mcp_tool_call');
    assert.equal(calls.length, 1, run.stdout);
    assert.equal(calls[0]!.item.status, 'completed', JSON.stringify(calls[0]));
    assert.equal(calls[0]!.item.result._meta['x402/payment-response'].success, true, 'the receipt reaches the host');

    await tools.paidOnce();
    await checkAccount(proxy, run, spendFile, dropped);
  } finally {
    await proxy.stop();
    await gateway.stop();
  }
});
