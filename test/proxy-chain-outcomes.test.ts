// `exact` payments whose outcome the proxy never saw are settled from the chain: a hop loses the paid answer, or
// never passes the paid call on. The used authorization is charged at once; the unused one stays held until its
// validity ends on the chain, and is then released, by the proxy that signed it or, after a restart, the next one.
// Its own sandbox chain: the test moves the chain's clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createTestClient, http } from 'viem';
import { balanceOf, fundedEvmBuyerKey } from './support/sandbox-wallet.ts';
import { proxyTestBed, runCli, startProxy, type RunningProxy } from './support/proxy-cli.ts';
import { gatewayTimeout, hopBefore, isPaid, relay } from './support/hop.ts';

const bed = proxyTestBed(['base']);

const statsOf = async (proxy: RunningProxy) => (await (await fetch(`${proxy.url}/stats`)).json()) as { pendingCalls: number; calls: number; spent: { atomic: string } };

async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await done()); tries++) {
    if (tries === 200) assert.fail(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a lost exact answer is charged as the chain shows; a call that never reached the gateway is released once its authorization expires, after a restart too', async () => {
  // the first paid call is served (and settled) at the gateway, then answered 504; the second never gets there
  let paidCalls = 0;
  const hop = await hopBefore(
    bed.service().url,
    (req, answer, body, res) => (isPaid(req) ? gatewayTimeout(res) : relay(answer!, body, res)),
    (req) => !(isPaid(req) && ++paidCalls === 2),
  );
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'base', buyer.address);
  const dropped = async () => start - (await balanceOf(bed.service(), 'base', buyer.address));
  const spendFile = join(bed.dir(), 'unknown.jsonl');
  const proxyArgs = ['--gateway', hop.url, '--network', 'base', '--scheme', 'exact', '--spend-file', spendFile];
  const first = await startProxy(proxyArgs, { X402_EVM_PRIVATE_KEY: buyer.key });
  try {
    const openai = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: 'sk-made-up', maxRetries: 0 });
    for (const content of ['Hello', 'Hello again']) {
      await assert.rejects(openai.chat.completions.create({ model: 'local/demo-bigram', messages: [{ role: 'user', content }], max_tokens: 8 }), { status: 504 });
    }
    await until('the lost answer is charged', async () => (await statsOf(first)).calls === 1);
    const account = await statsOf(first);
    assert.equal(account.pendingCalls, 1, 'the call that never reached the gateway is held: its authorization may still be used');
    const charged = await dropped();
    assert.ok(charged > 0n);
    assert.equal(BigInt(account.spent.atomic) - charged > 0n, true, 'the held call still counts its ceiling');
  } finally {
    await first.stop();
  }

  // the authorization's validity ends on the chain (the official client signs now + maxTimeoutSeconds)
  const chain = createTestClient({ transport: http(bed.service().sandbox!.chains.get('base')!.rpcUrl), mode: 'anvil' });
  await chain.increaseTime({ seconds: 3_700 });
  await chain.mine({ blocks: 1 });

  const second = await startProxy(proxyArgs, { X402_EVM_PRIVATE_KEY: buyer.key });
  try {
    await until('the expired authorization is released', async () => (await statsOf(second)).pendingCalls === 0);
  } finally {
    await second.stop();
    await hop.close();
  }
  const account = JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout);
  assert.equal(account.calls, 1);
  assert.equal(BigInt(account.spent.atomic), await dropped(), 'the account says what the chain says, to the atomic unit');
});
