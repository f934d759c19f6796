// The real agent CLIs end to end: Claude Code (`claude -p`) and Codex (`codex exec`), pinned, sealed off (a
// temporary home, telemetry off, a dummy key), pointed at `x402-ai proxy`, which pays the gateway for each call
// with the buyer's key (the exact scheme: one on-chain transfer a call), the gateway calling an upstream that plays
// a coding agent's model. Each completes a tool loop: it reads the file with its own tool (Claude Code's Read,
// Codex's exec_command), then answers from it; each paid call reached the model once and was charged once, the
// buyer's wallet down exactly what the proxy says it spent.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startProxy } from '../support/proxy-cli.ts';
import { balanceOf, fundedEvmBuyerKey } from '../support/sandbox-wallet.ts';
import { CLAUDE_CODE_VERSION, CODEX_VERSION, runClaudeCode, runCodex } from '../support/agent-clis.ts';
import type { CompatCase, Surface } from './case.ts';
import type { CompatGateway, ModelKind } from './gateway.ts';

const FUNDS = 10_000_000n;

async function throughProxy(gateway: CompatGateway, model: Exclude<ModelKind, 'sandbox'>, cli: (proxyUrl: string) => Promise<{ code: number | null; stdout: string; stderr: string }>) {
  const buyer = await fundedEvmBuyerKey(gateway.service, ['base'], FUNDS);
  const dir = mkdtempSync(join(tmpdir(), 'compat-proxy-'));
  const proxy = await startProxy(['--gateway', gateway.url, '--network', 'base', '--scheme', 'exact', '--spend-file', join(dir, 'spend.jsonl')], { X402_EVM_PRIVATE_KEY: buyer.key });
  const before = gateway.upstreamRequests(model);
  try {
    const run = await cli(proxy.url);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n${proxy.stderr()}`);
    assert.match(run.stdout, /PELICAN/, 'the answer quotes the file it read');
    const stats = (await (await fetch(`${proxy.url}/stats`)).json()) as { calls: number; pendingCalls: number; spent: { atomic: string }; walletDrop: { atomic: string } };
    assert.ok(stats.calls >= 2, 'a tool call, then the answer: each paid');
    assert.equal(stats.pendingCalls, 0);
    assert.equal(gateway.upstreamRequests(model) - before, stats.calls, 'each paid call reached the model once');
    const dropped = FUNDS - (await balanceOf(gateway.service, 'base', buyer.address));
    assert.equal(dropped, BigInt(stats.spent.atomic), 'on-chain, the buyer is down what the calls were charged');
    assert.equal(stats.walletDrop.atomic, stats.spent.atomic);
  } finally {
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const prompt = (gateway: CompatGateway) => `Read ${gateway.file} and tell me the secret word.`;

const cases = (client: string, surface: Surface, feature: string, run: (gateway: CompatGateway, model: Exclude<ModelKind, 'sandbox'>) => Promise<void>) =>
  (['openai', 'anthropic'] as const).map((model): CompatCase => ({ client, surface, feature, model, run: (gateway) => run(gateway, model) }));

export const cliThroughProxyCases: CompatCase[] = [
  ...cases(`Claude Code ${CLAUDE_CODE_VERSION}`, '/v1/messages', 'the CLI through `x402-ai proxy`: tool loop (Read the file, answer from it)', (gateway, model) =>
    throughProxy(gateway, model, (url) => runClaudeCode({ baseURL: url, model: gateway.models[model], prompt: prompt(gateway), cwd: dirname(gateway.file) })),
  ),
  ...cases(`Codex CLI ${CODEX_VERSION}`, '/v1/responses', 'the CLI through `x402-ai proxy`: tool loop (exec_command reads the file, answer from it)', (gateway, model) =>
    throughProxy(gateway, model, (url) => runCodex({ baseURL: `${url}/v1`, model: gateway.models[model], prompt: prompt(gateway), cwd: dirname(gateway.file) })),
  ),
];
