// A runaway agent through `x402-ai proxy`: the upstream model always asks for another tool call and the agent
// always obliges, on the sandbox base chain with payment channels (the proxy's first choice). The loop stops at
// --max-total: the chain shows the buyer down by no more than the cap, the agent gets the cap's error in its own
// shape (OpenAI's on /v1/chat/completions, Anthropic's on /v1/messages), a restarted proxy still counts what was
// spent, and after `x402-ai proxy --refund` the buyer is down exactly the sum of the receipts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startToolGateway, UP_TOOLS } from './support/tool-gateway.ts';
import { balanceOf, fundedEvmBuyerKey } from './support/sandbox-wallet.ts';
import { runCli, startProxy, type RunningProxy } from './support/proxy-cli.ts';

const CAP = 20_000n; // 0.02 USDC
const TOOLS = [
  {
    type: 'function' as const,
    function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } },
  },
];

let gateway: Awaited<ReturnType<typeof startToolGateway>>;
let dir: string;
before(async () => {
  gateway = await startToolGateway();
  dir = mkdtempSync(join(tmpdir(), 'x402-proxy-caps-'));
});
after(async () => {
  await gateway.stop();
  rmSync(dir, { recursive: true, force: true });
});

const decode = (header: string | null) => JSON.parse(Buffer.from(header!, 'base64').toString('utf8'));

test('a tool loop stops at --max-total: the chain, the agent, a restart and the refund agree to the atomic unit', async () => {
  const { service } = gateway;
  const buyer = await fundedEvmBuyerKey(service, ['base'], 5_000_000n);
  const env = { X402_EVM_PRIVATE_KEY: buyer.key };
  const spendFile = join(dir, 'spend.jsonl');
  const args = ['--gateway', service.url, '--network', 'base', '--max-total', '0.02', '--spend-file', spendFile];
  const start = await balanceOf(service, 'base', buyer.address);
  let proxy: RunningProxy = await startProxy(args, env);
  try {
    assert.ok(proxy.lines.some((line) => line.includes(`ANTHROPIC_BASE_URL=${proxy.url}`)), 'the lines to paste are printed');

    // the agent: whatever the model asks for, it runs the tool and asks again
    const openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-whatever-the-agent-has', maxRetries: 0 });
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    let receipts = 0n;
    let calls = 0;
    let refusal: unknown;
    while (calls < 100) {
      try {
        const { data, response } = await openai.chat.completions.create({ model: UP_TOOLS, messages, tools: TOOLS, max_tokens: 64 }).withResponse();
        receipts += BigInt(decode(response.headers.get('payment-response')).extra.chargedAmount);
        const message = data.choices[0]!.message;
        assert.equal(message.tool_calls?.length, 1, 'the model asks for another tool call');
        messages.push(message, { role: 'tool', tool_call_id: message.tool_calls![0]!.id, content: 'Sunny, 21 degrees' });
        calls++;
      } catch (error) {
        refusal = error;
        break;
      }
    }
    assert.ok(calls > 5, `paid calls before the cap: ${calls}`);
    assert.ok(refusal instanceof OpenAI.APIError, String(refusal));
    assert.equal(refusal.status, 402);
    assert.equal(refusal.code, 'spending_cap_reached');
    assert.match(refusal.message, /--max-total 0\.02 USDC.*nothing was signed/);

    const stats = (await (await fetch(`${proxy.url}/stats`)).json()) as any;
    assert.ok(!`${proxy.lines.join('\n')}${proxy.stderr()}${JSON.stringify(stats)}`.includes(buyer.key.slice(2)), 'the key is never printed nor shown');
    const dropped = start - (await balanceOf(service, 'base', buyer.address));
    assert.ok(dropped <= CAP, `the buyer is down ${dropped}, the cap is ${CAP}`);
    assert.equal(BigInt(stats.walletDrop.atomic), dropped, '/stats says what left the wallet, to the atomic unit');
    assert.equal(BigInt(stats.spent.atomic), receipts, 'the account is the sum of the receipts');
    assert.equal(stats.calls, calls);
    assert.equal(stats.perScheme['batch-settlement'].calls, calls);
    assert.equal(stats.perModel[UP_TOOLS].calls, calls);

    // the same cap in Anthropic's shape on /v1/messages
    const anthropic = new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-whatever', maxRetries: 0 });
    const refused = await anthropic.messages.create({ model: UP_TOOLS, max_tokens: 64, messages: [{ role: 'user', content: 'And in Oslo?' }] }).catch((error: unknown) => error);
    assert.ok(refused instanceof Anthropic.APIError, String(refused));
    assert.equal(refused.status, 402);
    assert.equal((refused.error as any).type, 'error');
    assert.equal((refused.error as any).error.type, 'billing_error');
    assert.match((refused.error as any).error.message, /--max-total 0\.02 USDC/);

    // a restart: the spend file still counts it all
    await proxy.stop();
    proxy = await startProxy(args, env);
    const again = await openai.withOptions({ baseURL: `${proxy.url}/v1` }).chat.completions.create({ model: UP_TOOLS, messages, tools: TOOLS, max_tokens: 64 }).catch((error: unknown) => error);
    assert.ok(again instanceof OpenAI.APIError && again.status === 402 && again.code === 'spending_cap_reached', String(again));
    const restarted = (await (await fetch(`${proxy.url}/stats`)).json()) as any;
    assert.equal(restarted.spent.atomic, stats.spent.atomic);
    assert.equal(restarted.caps.total.left.atomic, (CAP - receipts).toString());
  } finally {
    await proxy.stop();
  }

  // the channel's unspent deposit back: the buyer is down exactly what the receipts charged
  const refund = await runCli(['proxy', '--refund', ...args], env);
  assert.equal(refund.code, 0, refund.stderr);
  assert.match(refund.stdout, /refunded \d+(\.\d+)? USDC from channel 0x[0-9a-f]{64}, tx 0x[0-9a-f]{64}/);
  const spend = await runCli(['spend', '--json', '--spend-file', spendFile], {});
  const account = JSON.parse(spend.stdout);
  const dropped = start - (await balanceOf(service, 'base', buyer.address));
  assert.equal(BigInt(account.spent.atomic), dropped);
  assert.equal(BigInt(account.walletDrop.atomic), dropped);
  assert.equal(account.channels.unspent.atomic, '0');
  assert.equal(statSync(spendFile).mode & 0o777, 0o600);
});
