// `exact` and `upto` payments whose outcome the proxy never saw are settled from the chain: a hop loses the paid
// answer, or never passes the paid call on. A used authorization is charged at once (a used upto permit, what the
// gateway's record says it settled); an unused authorization or permit stays held until its validity ends on the
// chain, and is then released by the next proxy on the spend file. On Solana both wait for their blockhash to expire:
// then the one that landed (found among the payer's transactions by the payer's signature) is charged, the other released.
// Its own sandbox chains: the test moves their clocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import OpenAI from 'openai';
import { createTestClient, http } from 'viem';
import { getBase58Decoder } from '@solana/kit';
import { balanceOf, fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import { proxyTestBed, runCli, startProxy, type RunningProxy } from './support/proxy-cli.ts';
import { isPaid, losingPaidAnswers } from './support/hop.ts';
import { until } from './support/sse.ts';

const bed = proxyTestBed(['base', 'solana']);

const statsOf = async (proxy: RunningProxy) => (await (await fetch(`${proxy.url}/stats`)).json()) as { pendingCalls: number; calls: number; spent: { atomic: string } };

/** the scheme a paid call pays with (x402 v2's PAYMENT-SIGNATURE) */
const schemeOf = (req: IncomingMessage) => JSON.parse(Buffer.from(String(req.headers['payment-signature']), 'base64').toString()).accepted.scheme as string;

const chatThrough = (proxy: RunningProxy, content: string) =>
  new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-made-up', maxRetries: 0 }).chat.completions.create({ model: 'local/demo-bigram', messages: [{ role: 'user', content }], max_tokens: 8 });

test('lost exact and upto answers are charged what the chain and the gateway show; calls that never reached the gateway are released once their validity ends, after a restart too', async (t) => {
  // each scheme's first call is served (and settled) at the gateway, then answered 504; its second never gets there
  const paidCalls = new Map<string, number>();
  const hop = await losingPaidAnswers(bed.service().url, (req) => {
    if (!isPaid(req)) return true;
    const scheme = schemeOf(req);
    paidCalls.set(scheme, (paidCalls.get(scheme) ?? 0) + 1);
    return paidCalls.get(scheme) === 1;
  });
  t.after(() => hop.close());
  const payers = await Promise.all(
    (['exact', 'upto'] as const).map(async (scheme) => {
      const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
      const start = await balanceOf(bed.service(), 'base', buyer.address);
      const spendFile = join(bed.dir(), `${scheme}.jsonl`);
      return {
        scheme,
        dropped: async () => start - (await balanceOf(bed.service(), 'base', buyer.address)),
        spendFile,
        start: () => startProxy(['--gateway', hop.url, '--network', 'base', '--scheme', scheme, '--spend-file', spendFile], { X402_EVM_PRIVATE_KEY: buyer.key }),
      };
    }),
  );
  for (const payer of payers) {
    const first = await payer.start();
    try {
      for (const content of ['Hello', 'Hello again']) await assert.rejects(chatThrough(first, content), { status: 504 });
      await until(`the lost ${payer.scheme} answer is charged`, async () => (await statsOf(first)).calls === 1);
      const account = await statsOf(first);
      assert.equal(account.pendingCalls, 1, `${payer.scheme}: the call that never reached the gateway is held: its authorization may still be used`);
      assert.ok(BigInt(account.spent.atomic) > (await payer.dropped()), 'the held call still counts its ceiling');
    } finally {
      await first.stop();
    }
  }

  // the authorization's and the permit's validity end on the chain (signed for now + maxTimeoutSeconds)
  const chain = createTestClient({ transport: http(bed.service().sandbox!.chains.get('base')!.rpcUrl), mode: 'anvil' });
  await chain.increaseTime({ seconds: 3_700 });
  await chain.mine({ blocks: 1 });

  for (const payer of payers) {
    const next = await payer.start();
    try {
      await until(`the expired ${payer.scheme} payment is released`, async () => (await statsOf(next)).pendingCalls === 0);
    } finally {
      await next.stop();
    }
    const account = JSON.parse((await runCli(['spend', '--json', '--spend-file', payer.spendFile], {})).stdout);
    assert.equal(account.calls, 1);
    assert.equal(BigInt(account.spent.atomic), await payer.dropped(), `${payer.scheme}: the account says what the chain says, to the atomic unit`);
  }
});

test('on Solana, once the blockhash has expired, a lost answer is charged and a call that never reached the gateway released, by the next proxy', async (t) => {
  // the first paid call is served (and settled) at the gateway, then answered 504; the second never gets there
  let paidCalls = 0;
  const hop = await losingPaidAnswers(bed.service().url, (req) => !isPaid(req) || ++paidCalls === 1);
  t.after(() => hop.close());
  const buyer = await fundedSolanaBuyerKey(bed.service(), ['solana'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'solana', buyer.address);
  const dropped = async () => start - (await balanceOf(bed.service(), 'solana', buyer.address));
  const spendFile = join(bed.dir(), 'solana.jsonl');
  const startOnSolana = () => startProxy(['--gateway', hop.url, '--network', 'solana', '--spend-file', spendFile], { X402_SOLANA_SECRET_KEY: getBase58Decoder().decode(buyer.secretKey) });

  const first = await startOnSolana();
  try {
    for (const content of ['Hello', 'Hello again']) await assert.rejects(chatThrough(first, content), { status: 504 });
    assert.ok((await dropped()) > 0n, 'the first call was settled at the gateway');
    assert.equal((await statsOf(first)).pendingCalls, 2, 'both are held while their blockhash may still land them');
  } finally {
    await first.stop();
  }

  await bed.service().sandbox!.chains.get('solana')!.advanceBlocks!(151);
  const next = await startOnSolana();
  try {
    await until('both Solana outcomes are settled', async () => (await statsOf(next)).pendingCalls === 0);
  } finally {
    await next.stop();
  }
  const account = JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout);
  assert.equal(account.calls, 1);
  assert.equal(BigInt(account.spent.atomic), await dropped(), 'the account says what the chain says, to the atomic unit');
});
