// `x402-ai proxy` as the agents use it, on the sandbox base (and solana) chains with the embedded models: every surface the
// gateway sells (plain and streamed) through the unmodified openai and Anthropic SDKs with a made-up API key, the
// free routes passed through, an account line per paid call and /stats equal to the chain under each scheme, a
// payee the proxy does not know refused before anything is signed, and a window cap that says when it reopens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { getBase58Decoder } from '@solana/kit';
import { balanceOf, fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import { proxyTestBed, runCli, startProxy, type RunningProxy } from './support/proxy-cli.ts';
import { gatewayTimeout, hopBefore, isPaid, losingFirstPaidAnswer } from './support/hop.ts';

const CHAT = 'local/demo-bigram';

const bed = proxyTestBed(['base', 'solana']);

/** A funded buyer and a proxy paying for it with `args`, its own spend file. */
async function proxyFor(name: string, args: string[] = []) {
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'base', buyer.address);
  const proxy = await startProxy(['--gateway', bed.service().url, '--network', 'base', '--spend-file', join(bed.dir(), `${name}.jsonl`), ...args], { X402_EVM_PRIVATE_KEY: buyer.key });
  const dropped = async () => start - (await balanceOf(bed.service(), 'base', buyer.address));
  const stats = async () => (await (await fetch(`${proxy.url}/stats`)).json()) as any;
  return { buyer, proxy, dropped, stats };
}

const openaiAt = (proxy: RunningProxy) => new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-made-up', maxRetries: 0 });
const anthropicAt = (proxy: RunningProxy) => new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-made-up', maxRetries: 0 });

test('every surface, plain and streamed, paid by vouchers: an account line each, /stats what left the wallet', async () => {
  const { proxy, dropped, stats } = await proxyFor('surfaces');
  try {
    const openai = openaiAt(proxy);
    const anthropic = anthropicAt(proxy);
    const chat = await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 });
    assert.ok(chat.choices[0]!.message.content);
    let streamed = '';
    for await (const chunk of await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8, stream: true, stream_options: { include_usage: true } })) {
      streamed += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.ok(streamed.length > 0, 'streamed token by token');
    const response = await openai.responses.create({ model: CHAT, input: 'Tell me about the sea', max_output_tokens: 16 });
    assert.ok(response.output_text.length > 0);
    const responseStream = await openai.responses.stream({ model: CHAT, input: 'Tell me about the sea', max_output_tokens: 16 }).finalResponse();
    assert.ok(responseStream.output_text.length > 0);
    const message = await anthropic.messages.create({ model: CHAT, max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(message.type, 'message');
    const streamedMessage = await anthropic.messages.stream({ model: CHAT, max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage();
    assert.ok(streamedMessage.usage.output_tokens > 0);
    const counted = await anthropic.messages.countTokens({ model: CHAT, messages: [{ role: 'user', content: 'Hello there' }] });
    assert.ok(counted.input_tokens > 0, 'count_tokens is free and passes through');
    const models = await openai.models.list();
    assert.ok(models.data.some((model) => model.id === CHAT), '/v1/models passes through');
    const image = await openai.images.generate({ model: 'preview-image', prompt: 'a lighthouse', size: '256x256', n: 1 });
    assert.ok(image.data?.[0]?.url ?? image.data?.[0]?.b64_json);
    const speech = await openai.audio.speech.create({ model: 'espeak-ng', input: 'Hello', voice: 'en-us' as 'alloy', response_format: 'wav' });
    assert.ok((await speech.arrayBuffer()).byteLength > 44);

    const account = await stats();
    assert.equal(account.calls, 8, 'eight paid calls, the free ones not counted');
    assert.equal(account.pendingCalls, 0);
    assert.equal(account.perScheme['batch-settlement'].calls, 8);
    assert.equal(account.perModel[CHAT].calls, 6);
    assert.equal(BigInt(account.walletDrop.atomic), await dropped(), 'deposits out of the wallet, to the atomic unit');
    const lines = proxy.lines.filter((line) => / charged \d/.test(line));
    assert.equal(lines.length, 8, lines.join('\n'));
    assert.match(lines[0]!, /\/v1\/chat\/completions {2}local\/demo-bigram {2}\d+ in \/ \d+ out {2}charged 0\.\d+ USDC \(voucher\) {2}total 0\.\d+ USDC/);
  } finally {
    await proxy.stop();
  }
});

test('the OpenAI Agents SDK runs an agent through the proxy, its default client pointed at it', async () => {
  const { proxy, stats } = await proxyFor('agents');
  try {
    const { Agent, run, setDefaultOpenAIClient, setTracingDisabled } = await import('@openai/agents');
    setDefaultOpenAIClient(openaiAt(proxy));
    setTracingDisabled(true);
    const agent = new Agent({ name: 'Assistant', instructions: 'Answer in one sentence.', model: CHAT });
    const result = await run(agent, 'Tell me about the sea');
    assert.ok(typeof result.finalOutput === 'string' && result.finalOutput.length > 0, String(result.finalOutput));
    assert.equal((await stats()).calls, 1);
  } finally {
    await proxy.stop();
  }
});

for (const scheme of ['exact', 'upto'] as const) {
  test(`--scheme ${scheme}: each call settled on chain, /stats spent equal to the buyer's balance drop`, async () => {
    const { proxy, dropped, stats } = await proxyFor(scheme, ['--scheme', scheme]);
    try {
      const openai = openaiAt(proxy);
      await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 });
      for await (const chunk of await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8, stream: true })) void chunk;
      await anthropicAt(proxy).messages.create({ model: CHAT, max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] });
      const account = await stats();
      assert.equal(account.perScheme[scheme].calls, 3);
      assert.equal(BigInt(account.spent.atomic), await dropped());
      assert.equal(account.spent.atomic, account.walletDrop.atomic);
    } finally {
      await proxy.stop();
    }
  });
}

test('on Solana the proxy pays exact with the Solana key: /stats equal to the balance drop', async () => {
  const buyer = await fundedSolanaBuyerKey(bed.service(), ['solana'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'solana', buyer.address);
  const proxy = await startProxy(['--gateway', bed.service().url, '--network', 'solana', '--spend-file', join(bed.dir(), 'solana.jsonl')], {
    X402_SOLANA_SECRET_KEY: getBase58Decoder().decode(buyer.secretKey),
  });
  try {
    const chat = await openaiAt(proxy).chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 });
    assert.ok(chat.choices[0]!.message.content);
    const account = (await (await fetch(`${proxy.url}/stats`)).json()) as any;
    assert.equal(account.perScheme.exact.calls, 1);
    assert.equal(BigInt(account.spent.atomic), start - (await balanceOf(bed.service(), 'solana', buyer.address)));
  } finally {
    await proxy.stop();
  }
});

test('--max-total holds when a hop between proxy and gateway loses the answer or its receipt: an unknown outcome counts until the chain tells', async () => {
  for (const mode of ['cut', 'strip'] as const) {
    // paid calls are served (and settled) at the gateway, then answered 504, or without PAYMENT-RESPONSE
    const hop = await hopBefore(bed.service().url, (req, answer, body, res) => {
      const paid = isPaid(req);
      if (paid && mode === 'cut') return gatewayTimeout(res);
      const { 'payment-response': _receipt, 'content-length': _length, 'transfer-encoding': _encoding, ...headers } = answer!.headers;
      res.writeHead(answer!.statusCode!, paid ? headers : answer!.headers).end(body);
    });
    const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
    const start = await balanceOf(bed.service(), 'base', buyer.address);
    const proxy = await startProxy(['--gateway', hop.url, '--network', 'base', '--scheme', 'exact', '--max-total', '0.004', '--spend-file', join(bed.dir(), `lossy-${mode}.jsonl`)], { X402_EVM_PRIVATE_KEY: buyer.key });
    try {
      const refusals: string[] = [];
      for (let i = 0; i < 6; i++) {
        await openaiAt(proxy)
          .chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: `Hello ${i}` }], max_tokens: 8 })
          .catch((error: unknown) => refusals.push((error as { code?: string }).code ?? String(error)));
      }
      assert.ok(refusals.includes('spending_cap_reached'), `${mode}: ${refusals.join(', ')}`);
      const dropped = start - (await balanceOf(bed.service(), 'base', buyer.address));
      assert.ok(dropped > 0n && dropped <= 4_000n, `${mode}: the buyer is down ${dropped}, the cap is 4000`);
    } finally {
      await proxy.stop();
      await hop.close();
    }
  }
});

/** `count` chat calls sent at once through `proxy`: each must be served (the refusals, if any, in the failure) */
async function allServed(proxy: RunningProxy, count: number): Promise<void> {
  const openai = openaiAt(proxy);
  const answers = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: `Hello ${i}` }], max_tokens: 8 })),
  );
  const refused = answers.flatMap((answer) => (answer.status === 'rejected' ? [String(answer.reason)] : []));
  assert.deepEqual(refused, []);
}

test('calls sent in parallel under a --max-total one deposit fills wait for that lane, none refused', async () => {
  const { proxy, dropped, stats } = await proxyFor('parallel-cap', ['--max-total', '0.5']);
  try {
    await allServed(proxy, 4);
    assert.equal((await stats()).calls, 4);
    assert.ok((await dropped()) <= 500_000n);
  } finally {
    await proxy.stop();
  }
});

test('a wallet holding less than the deposit aimed for (1 USDC) funds its channel with what it holds: calls are served', async () => {
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 300_000n);
  const proxy = await startProxy(['--gateway', bed.service().url, '--network', 'base', '--spend-file', join(bed.dir(), 'small-wallet.jsonl')], { X402_EVM_PRIVATE_KEY: buyer.key });
  try {
    await allServed(proxy, 1);
    await allServed(proxy, 1);
    const account = (await (await fetch(`${proxy.url}/stats`)).json()) as any;
    assert.equal(account.perScheme['batch-settlement'].calls, 2);
    assert.equal(account.channels.deposited.atomic, '300000', 'the whole wallet, not the 1 USDC it does not have');
    assert.equal(await balanceOf(bed.service(), 'base', buyer.address), 0n);
  } finally {
    await proxy.stop();
  }
});

test('--scheme upto with calls in parallel: each served and settled in turn, /stats equal to the balance drop', async () => {
  const { proxy, dropped, stats } = await proxyFor('upto-parallel', ['--scheme', 'upto']);
  try {
    await allServed(proxy, 5);
    const account = await stats();
    assert.equal(account.perScheme.upto.calls, 5);
    assert.equal(BigInt(account.spent.atomic), await dropped());
  } finally {
    await proxy.stop();
  }
});

/** `x402-ai spend --json` of a proxy's spend file, once it has exited */
async function spendOf(name: string) {
  return JSON.parse((await runCli(['spend', '--json', '--spend-file', join(bed.dir(), `${name}.jsonl`)], {})).stdout);
}

test('an agent that leaves streamed calls mid-answer: every later call is served, and after --refund-on-exit the cut calls cost what the gateway charged for them', async () => {
  const { proxy, dropped } = await proxyFor('cut-streams', ['--refund-on-exit']);
  const anthropic = anthropicAt(proxy);
  const failures: string[] = [];
  try {
    // rounds of six calls at once over the four channels, every other one cut after its first events (as an agent
    // cancels a side request): each lane's next voucher is signed as if a cut call cost nothing
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const cut = (round + i) % 2 === 0;
          const leave = new AbortController();
          try {
            let events = 0;
            const stream = await anthropic.messages.create({ model: CHAT, max_tokens: 200, stream: true, messages: [{ role: 'user', content: `Tell me about the sea, ${round}.${i}` }] }, { signal: leave.signal });
            for await (const _event of stream) if (cut && ++events === 3) leave.abort();
          } catch (error) {
            if (!cut || !leave.signal.aborted) failures.push(`${round}.${i}: ${String(error)}`);
          }
        }),
      );
    }
  } finally {
    await proxy.stop();
  }
  assert.deepEqual(failures, []);
  const account = await spendOf('cut-streams');
  assert.equal(account.pendingCalls, 0, 'each cut call settled by what its channel showed next (an answer, a refund)');
  assert.ok(account.calls >= 9, 'the calls not cut were charged');
  assert.equal(BigInt(account.spent.atomic), await dropped(), 'after the refund the buyer is down what the account says was spent');
});

test('on a channel, a paid answer a hop loses is settled by the corrective 402 of the next call: charged what the gateway charged, nothing held', async () => {
  // the first paid call is served (and charged) at the gateway, then answered 504
  const hop = await losingFirstPaidAnswer(bed.service().url);
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'base', buyer.address);
  const proxy = await startProxy(['--gateway', hop.url, '--network', 'base', '--refund-on-exit', '--spend-file', join(bed.dir(), 'lost-voucher.jsonl')], { X402_EVM_PRIVATE_KEY: buyer.key });
  try {
    const openai = openaiAt(proxy);
    await assert.rejects(openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 }), { status: 504 });
    assert.equal(((await (await fetch(`${proxy.url}/stats`)).json()) as any).pendingCalls, 1, 'the lost answer held until its channel tells');
    const served = await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello again' }], max_tokens: 8 });
    assert.ok(served.choices[0]!.message.content);
    const account = (await (await fetch(`${proxy.url}/stats`)).json()) as any;
    assert.equal(account.pendingCalls, 0);
    assert.equal(account.calls, 2, 'the lost call was charged at the gateway, and is counted so');
  } finally {
    await proxy.stop();
    await hop.close();
  }
  const account = await spendOf('lost-voucher');
  assert.equal(BigInt(account.spent.atomic), start - (await balanceOf(bed.service(), 'base', buyer.address)), 'after the refund the buyer is down what was spent, to the atomic unit');
});

test('a voucher answer lost just before the proxy stops is settled by the next proxy on the spend file, at its first call', async () => {
  const hop = await losingFirstPaidAnswer(bed.service().url);
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const start = await balanceOf(bed.service(), 'base', buyer.address);
  const spendFile = join(bed.dir(), 'lost-voucher-restart.jsonl');
  const proxyOn = (args: string[] = []) => startProxy(['--gateway', hop.url, '--network', 'base', '--spend-file', spendFile, ...args], { X402_EVM_PRIVATE_KEY: buyer.key });
  const chat = (proxy: RunningProxy, content: string) => openaiAt(proxy).chat.completions.create({ model: CHAT, messages: [{ role: 'user', content }], max_tokens: 8 });
  const first = await proxyOn();
  try {
    await assert.rejects(chat(first, 'Hello'), { status: 504 });
  } finally {
    await first.stop();
  }
  assert.equal(JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout).pendingCalls, 1, 'held in the spend file');
  const second = await proxyOn(['--refund-on-exit']);
  try {
    assert.ok((await chat(second, 'Hello again')).choices[0]!.message.content);
    const account = (await (await fetch(`${second.url}/stats`)).json()) as any;
    assert.equal(account.pendingCalls, 0, 'the channel state the gateway showed settled the earlier call');
    assert.equal(account.calls, 2, 'the lost call was charged at the gateway, and is counted so');
  } finally {
    await second.stop();
    await hop.close();
  }
  const account = JSON.parse((await runCli(['spend', '--json', '--spend-file', spendFile], {})).stdout);
  assert.equal(BigInt(account.spent.atomic), start - (await balanceOf(bed.service(), 'base', buyer.address)), 'after the refund the buyer is down what was spent, to the atomic unit');
});

test('x402-ai proxy --refund while the proxy runs: its next call opens the channel again and is served', async () => {
  const buyer = await fundedEvmBuyerKey(bed.service(), ['base'], 5_000_000n);
  const args = ['--gateway', bed.service().url, '--network', 'base', '--spend-file', join(bed.dir(), 'refund-live.jsonl')];
  const proxy = await startProxy(args, { X402_EVM_PRIVATE_KEY: buyer.key });
  try {
    const openai = openaiAt(proxy);
    await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 });
    const refund = await runCli(['proxy', '--refund', ...args], { X402_EVM_PRIVATE_KEY: buyer.key });
    assert.equal(refund.code, 0, refund.stderr);
    const after = await openai.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello again' }], max_tokens: 8 });
    assert.ok(after.choices[0]?.message.content);
  } finally {
    await proxy.stop();
  }
});

test('HEAD of the model list, a doubled or trailing slash (a base URL ending in "/" joined by hand), and OpenAI\'s speech model name reach the route', async () => {
  const { proxy } = await proxyFor('paths');
  try {
    assert.equal((await fetch(`${proxy.url}/v1/models`, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(`${proxy.url}//v1/models`)).status, 200);
    assert.equal((await fetch(`${proxy.url}/v1/models/`)).status, 200);
    assert.equal((await fetch(`${proxy.url}/api/hello`, { method: 'HEAD' })).status, 200, "Claude Code's connection check");
    const paid = await fetch(`${proxy.url}/v1//chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 }) });
    assert.equal(paid.status, 200, await paid.clone().text());
    // OpenAI's SDK makes a speech caller name a model: one the gateway does not sell is its first speech model
    const speech = await openaiAt(proxy).audio.speech.create({ model: 'tts-1', input: 'Hi', voice: 'alloy' }).asResponse();
    assert.equal(speech.status, 200);
    assert.match(speech.headers.get('x-model-substituted') ?? '', /^tts-1 -> /);
  } finally {
    await proxy.stop();
  }
});

test('a 402 asking to pay another payee than --pay-to is refused, in the client’s shape, before anything is signed', async () => {
  const { proxy, dropped, stats } = await proxyFor('payee', ['--pay-to', `0x${'de'.repeat(20)}`]);
  try {
    const refused = await openaiAt(proxy).chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 }).catch((error: unknown) => error);
    assert.ok(refused instanceof OpenAI.APIError, String(refused));
    assert.equal(refused.status, 402);
    assert.equal(refused.code, 'payee_refused');
    assert.match(refused.message, /pays only 0xdede.* \(--pay-to\); nothing was signed/);
    assert.equal(await dropped(), 0n);
    assert.equal((await stats()).spent.atomic, '0');
  } finally {
    await proxy.stop();
  }
});

test('a web page cannot spend the wallet: a foreign Origin or Host is refused before any quote; no CORS header goes back', async () => {
  const { proxy, dropped, stats } = await proxyFor('web-page');
  const { port } = new URL(proxy.url);
  const call = (path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const sent = httpRequest({ host: '127.0.0.1', port, path, method: body === undefined ? 'GET' : 'POST', headers }, async (answer) => {
        let text = '';
        for await (const piece of answer) text += piece;
        resolve({ status: answer.statusCode!, headers: answer.headers, text });
      });
      sent.on('error', reject);
      sent.end(body);
    });
  const chat = JSON.stringify({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 });
  try {
    // a page's simple POST (text/plain: no preflight), a page from a file (Origin null), a rebound name
    for (const headers of [
      { Origin: 'https://evil.example', 'Content-Type': 'text/plain' },
      { Origin: 'null', 'Content-Type': 'application/json' },
      { Host: `evil.example:${port}`, 'Content-Type': 'application/json' },
    ] as Record<string, string>[]) {
      const refused = await call('/v1/chat/completions', headers, chat);
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.match(JSON.parse(refused.text).error.message, /programs on this machine only/);
    }
    assert.equal(await dropped(), 0n);
    assert.equal((await stats()).spent.atomic, '0');
    // a page of this machine (a local web UI) is served; the gateway's CORS headers stay behind
    const local = await call('/v1/models', { Origin: 'http://localhost:3000' });
    assert.equal(local.status, 200);
    assert.equal(local.headers['access-control-allow-origin'], undefined);
    // a model's path cannot climb to another route of the gateway
    assert.equal((await call('/v1/models/../../healthz', {})).status, 404);
    assert.equal((await call('/v1/models/%2e%2e/%2E%2E/healthz', {})).status, 404);
  } finally {
    await proxy.stop();
  }
});

test('--max-per-hour: past it the agent is told what was spent in the hour and when the window reopens', async () => {
  const { proxy } = await proxyFor('hourly', ['--max-per-hour', '0.0015', '--scheme', 'exact']);
  try {
    const openai = openaiAt(proxy);
    const ask = { model: CHAT, messages: [{ role: 'user' as const, content: 'Hello' }], max_tokens: 8 };
    await openai.chat.completions.create(ask);
    const refused = await openai.chat.completions.create(ask).catch((error: unknown) => error);
    assert.ok(refused instanceof OpenAI.APIError && refused.status === 402, String(refused));
    assert.match(refused.message, /--max-per-hour 0\.0015 USDC.*Spent 0\.00\d+ USDC in the last hour.*The window reopens at \S+Z \(in (59|60) min\)/);
  } finally {
    await proxy.stop();
  }
});
