// The paying client against a real sandbox server (EVM and Solana): it pays once, returns the typed result
// with its receipt, and refuses to sign a quote above maxPrice.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from './create-client.ts';
import { MaxPriceExceededError, OfferRefusedError } from './errors.ts';
import { formatUsdc, parseUsdc } from './usdc.ts';
import { getBase58Decoder } from '@solana/kit';
import { generateSolanaSecretKey, solanaSecretKeyBytes, solanaSigner } from './solana-key.ts';
import { startTestService } from '../../test/support/service.ts';
import { balanceOf, fundedEvmBuyerKey, fundedSolanaBuyerKey } from '../../test/support/sandbox-wallet.ts';
import type { RunningService } from '../service.ts';

let service: RunningService;
before(async () => {
  // a short settlement timeout, so that a held-back Solana settlement turns pending quickly
  service = await startTestService({ networks: ['base', 'solana'], config: { settlementTimeoutMs: 4000 } });
});
after(() => service.stop());

test('chat is paid once and returns the result with its receipt', async () => {
  const { key, address } = await fundedEvmBuyerKey(service, ['base']);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: parseUsdc('0.05') });
  const before = await balanceOf(service, 'base', address);
  const { result, receipt } = await client.chat({ model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 8 });
  assert.equal(result.model, 'local/demo-bigram');
  assert.ok(result.usage.tokens > 0);
  assert.equal(receipt.success, true);
  assert.equal(receipt.network, 'base');
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(await balanceOf(service, 'base', address), before - receipt.amount);
});

test('a quote above maxPrice is refused before anything is signed or paid', async () => {
  const { key, address } = await fundedEvmBuyerKey(service, ['base']);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: 1n });
  const before = await balanceOf(service, 'base', address);
  await assert.rejects(client.chat({ model: 'local/demo-bigram', prompt: 'Hello' }), MaxPriceExceededError);
  assert.equal(await balanceOf(service, 'base', address), before);
});

/** A fetch to the gateway whose 402s are rewritten, counting the proofs sent through it. */
function lyingGateway(rewrite: (accepts: Record<string, unknown>[]) => Record<string, unknown>[]) {
  const counted = { signed: 0 };
  const fetchThrough: typeof fetch = async (input, init) => {
    if (new Headers(init?.headers).has('X-PAYMENT')) counted.signed++;
    const response = await fetch(input, init);
    if (response.status !== 402) return response;
    const body = (await response.json()) as { accepts: Record<string, unknown>[] };
    body.accepts = rewrite(body.accepts);
    return new Response(JSON.stringify(body), { status: 402, headers: { 'Content-Type': 'application/json' } });
  };
  return { fetch: fetchThrough, counted };
}

test('a lying 402 cannot get more than maxPrice signed: the offer checked is the offer signed (exact, the network asked)', async () => {
  const { key } = await fundedEvmBuyerKey(service, ['base']);
  // a 1-unit offer of another scheme first, and the exact offer raised to 50 USDC
  const lying = lyingGateway(([exact]) => [{ ...exact, scheme: 'upto', maxAmountRequired: '1' }, { ...exact, maxAmountRequired: '50000000' }]);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: parseUsdc('0.01'), fetch: lying.fetch });
  await assert.rejects(client.chat({ model: 'local/demo-bigram', prompt: 'Hello' }), MaxPriceExceededError);
  assert.equal(lying.counted.signed, 0, 'nothing was signed');
});

test('a 402 naming another token, an amount like 1e3, a signature good for days or a payee other than payTo gets nothing signed; a USDC offer after a foreign one is paid', async () => {
  const { key, address } = await fundedEvmBuyerKey(service, ['base']);
  const lies: Record<string, unknown>[] = [{ asset: `0x${'de'.repeat(20)}` }, { maxAmountRequired: '1e3' }, { maxAmountRequired: '-1' }, { maxTimeoutSeconds: 864_000 }];
  for (const lie of lies) {
    const lying = lyingGateway(([exact]) => [{ ...exact, ...lie }]);
    const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: parseUsdc('0.05'), fetch: lying.fetch });
    await assert.rejects(client.chat({ model: 'local/demo-bigram', prompt: 'Hello' }), OfferRefusedError, JSON.stringify(lie));
    assert.equal(lying.counted.signed, 0, 'nothing was signed');
  }
  const elsewhere = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: parseUsdc('0.05'), payTo: `0x${'de'.repeat(20)}` });
  await assert.rejects(elsewhere.chat({ model: 'local/demo-bigram', prompt: 'Hello' }), /asks to pay "0x[0-9a-fA-F]{40}", not 0xdede.*nothing was signed/);
  const before = await balanceOf(service, 'base', address);
  const foreignFirst = lyingGateway(([exact]) => [{ ...exact, asset: `0x${'de'.repeat(20)}`, maxAmountRequired: '1' }, exact!]);
  const client = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: key, maxPrice: parseUsdc('0.05'), fetch: foreignFirst.fetch });
  const { receipt } = await client.chat({ model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 4 });
  assert.equal(foreignFirst.counted.signed, 1);
  assert.equal(await balanceOf(service, 'base', address), before - receipt.amount);
});

test('Solana: an image is paid once; exactly the price moves from the buyer to the gateway', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const payTo = service.rails.get('solana')!.payTo;
  // no solanaRpcUrl: the client finds the sandbox chain's RPC through /healthz
  const client = createClient({ baseUrl: service.url, network: 'solana', solanaSecretKey: buyer.secretKey, maxPrice: parseUsdc('0.05') });
  const request = { prompt: 'a lighthouse', n: 1, size: '256x256' };
  const price = await client.quote('/api/v1/ai/images', request);
  const [buyerBefore, payToBefore] = await Promise.all([balanceOf(service, 'solana', buyer.address), balanceOf(service, 'solana', payTo)]);
  const { result, receipt } = await client.images(request);
  assert.equal(result.images.length, 1);
  assert.deepEqual(
    { success: receipt.success, network: receipt.network, payer: receipt.payer, amount: receipt.amount },
    { success: true, network: 'solana', payer: buyer.address, amount: price },
  );
  assert.match(receipt.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  assert.equal(await balanceOf(service, 'solana', buyer.address), buyerBefore - price);
  assert.equal(await balanceOf(service, 'solana', payTo), payToBefore + price);
});

test('Solana: solanaRpcUrl is the RPC used; a quote above maxPrice signs nothing', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const rpcUrl = service.sandbox!.chains.get('solana')!.rpcUrl;
  const options = { baseUrl: service.url, network: 'solana', solanaSecretKey: getBase58Decoder().decode(buyer.secretKey), maxPrice: parseUsdc('0.05') };
  const before = await balanceOf(service, 'solana', buyer.address);
  const wrongRpc = createClient({ ...options, solanaRpcUrl: `${service.url}/not-an-rpc` });
  await assert.rejects(wrongRpc.chat({ model: 'local/demo-bigram', prompt: 'Hi', max_tokens: 4 }), /HTTP error \(404\)/);
  const capped = createClient({ ...options, solanaRpcUrl: rpcUrl, maxPrice: 1n });
  await assert.rejects(capped.chat({ model: 'local/demo-bigram', prompt: 'Hi', max_tokens: 4 }), MaxPriceExceededError);
  assert.equal(await balanceOf(service, 'solana', buyer.address), before);
  const { receipt } = await createClient({ ...options, solanaRpcUrl: rpcUrl }).chat({ model: 'local/demo-bigram', prompt: 'Hi', max_tokens: 4 });
  assert.equal(await balanceOf(service, 'solana', buyer.address), before - receipt.amount);
});

test('Solana: a pending settlement is retried with the same proof and X-Network, and paid once', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const mining = service.sandbox!.chains.get('solana')!.mining!;
  const sent: { proof: string; network: string | null; status: number; code?: string }[] = [];
  const observing: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    const proof = headers.get('X-PAYMENT');
    if (proof) {
      const pending = response.status === 409 ? ((await response.clone().json()) as { code: string; transaction: string }) : undefined;
      sent.push({ proof, network: headers.get('X-Network'), status: response.status, code: pending?.code });
      if (pending?.code === 'settlement_pending') {
        // the settlement was broadcast but held back: let it land, and wait until the gateway has found out
        // (a reconciler pass may find the payment leased by the periodic one, so pass until it is settled)
        await mining.mine();
        await mining.setAutomine(true);
        do await service.reconciler.runOnce();
        while (((await (await fetch(`${service.url}/api/v1/payments/${pending.transaction}`)).json()) as { state: string }).state !== 'settled');
      }
    }
    return response;
  };
  const client = createClient({ baseUrl: service.url, network: 'solana', solanaSecretKey: buyer.secretKey, maxPrice: parseUsdc('0.05'), fetch: observing });
  const before = await balanceOf(service, 'solana', buyer.address);
  await mining.setAutomine(false);
  let paid;
  try {
    paid = await client.chat({ model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 4 });
  } finally {
    await mining.setAutomine(true);
  }
  assert.deepEqual(sent.map((s) => [s.status, s.code]), [[409, 'settlement_pending'], [200, undefined]]);
  assert.equal(new Set(sent.map((s) => s.proof)).size, 1, 'the retry carries the same proof');
  assert.deepEqual(sent.map((s) => s.network), ['solana', 'solana']);
  assert.equal(paid.receipt.network, 'solana');
  assert.equal(await balanceOf(service, 'solana', buyer.address), before - paid.receipt.amount);
});

test('payment() gives the payer its result back on EVM and Solana; a stranger gets the public facts only', async () => {
  const evm = await fundedEvmBuyerKey(service, ['base']);
  const sol = await fundedSolanaBuyerKey(service, ['solana']);
  const maxPrice = parseUsdc('0.05');
  const evmClient = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: evm.key, maxPrice });
  const solClient = createClient({ baseUrl: service.url, network: 'solana', solanaSecretKey: sol.secretKey, maxPrice });
  const chat = await evmClient.chat({ model: 'local/demo-bigram', prompt: 'Hello', max_tokens: 8 });
  const tts = await solClient.tts({ text: 'Receipts for payers' });

  for (const [client, paid] of [[evmClient, chat], [solClient, tts]] as const) {
    const lookup = await client.payment(paid.receipt.transaction);
    assert.equal(lookup.state, 'settled');
    assert.equal(BigInt(lookup.amount), paid.receipt.amount);
    assert.deepEqual(lookup.result, paid.result);
  }
  const stranger = createClient({ baseUrl: service.url, network: 'base', evmPrivateKey: (await fundedEvmBuyerKey(service, [])).key, maxPrice });
  for (const paid of [chat, tts]) {
    const lookup = await stranger.payment(paid.receipt.transaction);
    assert.equal(lookup.state, 'settled');
    assert.equal(lookup.resultAvailable, true);
    assert.equal(lookup.result, undefined);
  }
});

test('Solana keys are read as bytes, a solana-keygen JSON array or base58; bad keys are refused without being quoted', async () => {
  const secretKey = generateSolanaSecretKey();
  const address = (await solanaSigner(secretKey)).address;
  assert.equal((await solanaSigner(JSON.stringify([...secretKey]))).address, address);
  assert.equal((await solanaSigner(getBase58Decoder().decode(secretKey))).address, address);
  const base58 = getBase58Decoder().decode(secretKey);
  for (const bad of [secretKey.subarray(0, 32), `${base58}0`, `[${[...secretKey].join(',')}`, JSON.stringify([...secretKey, 1]), 'not a key']) {
    assert.throws(() => solanaSecretKeyBytes(bad), (error: Error) => !error.message.includes(base58.slice(0, 12)) && !error.message.includes(`${secretKey[0]},${secretKey[1]},`));
  }
  const mismatched = Uint8Array.from([...secretKey.subarray(0, 32), ...generateSolanaSecretKey().subarray(32)]);
  await assert.rejects(solanaSigner(mismatched), /public half/);
  assert.throws(() => createClient({ baseUrl: service.url, network: 'solana', solanaSecretKey: 'not a key', maxPrice: 1n }));
});

test('USDC amounts convert exactly between decimal text and atomic units', () => {
  assert.equal(parseUsdc('0.05'), 50_000n);
  assert.equal(parseUsdc('12'), 12_000_000n);
  assert.equal(parseUsdc('0.000001'), 1n);
  assert.throws(() => parseUsdc('0.0000001'));
  assert.throws(() => parseUsdc('-1'));
  assert.equal(formatUsdc(1_050_000n), '1.05');
  assert.equal(formatUsdc(3_000_000n), '3');
});
