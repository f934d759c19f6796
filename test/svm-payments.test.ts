// Real payments on the sandbox Solana networks (litesvm behind a local JSON-RPC), paid by the official
// client code: x402-fetch 1.x with a Solana signer, and @x402/svm's v1 scheme (v2 payments: test/v2-payments.test.ts).
// Token balances are read before and after; one transaction used 50 times at once settles once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSigner, getBase58Decoder, signBytes, type KeyPairSigner } from '@solana/kit';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { wrapFetchWithPayment as wrapFetchV2, x402Client, x402HTTPClient } from '@x402/fetch';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, decodeReceipt, fundedSolanaBuyer } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';
import type { NetworkName } from '../src/x402/networks.ts';
import { receiptChallenge } from '../src/x402/receipt-challenge.ts';

const BODY = { prompt: 'a lighthouse on a cliff', n: 1, size: '256x256' };
const PATH = '/api/v1/ai/images';
const json = { 'Content-Type': 'application/json' };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['solana-devnet', 'solana'] });
});
after(() => service.stop());


async function price(network: string): Promise<bigint> {
  const response = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': network });
  const body = (await response.json()) as { accepts: { maxAmountRequired: string; extra: { feePayer: string } }[] };
  assert.match(body.accepts[0]!.extra.feePayer, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  return BigInt(body.accepts[0]!.maxAmountRequired);
}

const rpcUrl = (network: NetworkName) => service.sandbox!.chains.get(network)!.rpcUrl;

describe('official clients pay on Solana, charged exactly once', () => {
  test('x402-fetch 1.x with X-Network: solana-devnet', async () => {
    const buyer = await fundedSolanaBuyer(service, ['solana-devnet'], 5_000_000n);
    const payTo = service.rails.get('solana-devnet')!.payTo;
    const cost = await price('solana-devnet');
    const payToBefore = await balanceOf(service, 'solana-devnet', payTo);

    const pay = wrapFetchV1(fetch, buyer as never, undefined, undefined, { svmConfig: { rpcUrl: rpcUrl('solana-devnet') } });
    const response = await pay(`${service.url}${PATH}`, { method: 'POST', headers: { ...json, 'X-Network': 'solana-devnet' }, body: JSON.stringify(BODY) });
    assert.equal(response.status, 200, await response.clone().text());
    const receipt = decodeReceipt(response.headers.get('x-payment-response'));
    assert.equal(receipt.success, true);
    assert.equal(receipt.network, 'solana-devnet');
    assert.equal(receipt.payer, buyer.address);
    assert.match(receipt.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    assert.equal(await balanceOf(service, 'solana-devnet', buyer.address), 5_000_000n - cost);
    assert.equal(await balanceOf(service, 'solana-devnet', payTo), payToBefore + cost);
  });

  test('@x402/fetch 2.x with only the @x402/svm v1 scheme reads PAYMENT-REQUIRED first, so it cannot pay; nothing moves', async () => {
    // The official client prefers the v2 header whenever a 402 carries one (as every v2 server's does),
    // and a client with no v2 scheme registered then stops before signing anything.
    const buyer = await fundedSolanaBuyer(service, ['solana'], 5_000_000n);
    const client = new x402Client().registerV1('solana', new ExactSvmSchemeV1(buyer, { rpcUrl: rpcUrl('solana') }));
    const pay = wrapFetchV2(fetch, client)(`${service.url}${PATH}`, { method: 'POST', headers: json, body: JSON.stringify(BODY) });
    await assert.rejects(pay, /No client registered for x402 version: 2/);
    assert.equal(await balanceOf(service, 'solana', buyer.address), 5_000_000n);
  });

  test('the @x402/svm v1 scheme, given the v1 body by @x402/core\'s HTTP client, pays on X-PAYMENT', async () => {
    const buyer = await fundedSolanaBuyer(service, ['solana'], 5_000_000n);
    const client = new x402Client().registerV1('solana', new ExactSvmSchemeV1(buyer, { rpcUrl: rpcUrl('solana') }));
    const http = new x402HTTPClient(client);
    const quote = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'solana' });
    const headers = http.encodePaymentSignatureHeader(await client.createPaymentPayload((await quote.json()) as never));
    assert.deepEqual(Object.keys(headers), ['X-PAYMENT']);
    const response = await postJson(`${service.url}${PATH}`, BODY, headers);
    assert.equal(response.status, 200, await response.clone().text());
    const receipt = decodeReceipt(response.headers.get('x-payment-response'));
    assert.equal(receipt.network, 'solana');
    assert.equal(await balanceOf(service, 'solana', buyer.address), 5_000_000n - (await price('solana')));
  });
});

test('50 simultaneous uses of one Solana transaction: one settlement, one result', async () => {
  const buyer = await fundedSolanaBuyer(service, ['solana-devnet'], 5_000_000n);
  let proof = '';
  const capture: typeof fetch = async (input, init) => {
    const header = new Headers(init?.headers).get('X-PAYMENT');
    if (header) {
      proof = header;
      return new Response('{}', { status: 499 }); // stop here: the proof is what we wanted
    }
    return fetch(input, init);
  };
  await wrapFetchV1(capture, buyer as never, undefined, undefined, { svmConfig: { rpcUrl: rpcUrl('solana-devnet') } })(`${service.url}${PATH}`, {
    method: 'POST',
    headers: { ...json, 'X-Network': 'solana-devnet' },
    body: JSON.stringify(BODY),
  });
  assert.ok(proof);
  const responses = await Promise.all(
    Array.from({ length: 50 }, () => postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'solana-devnet', 'X-PAYMENT': proof })),
  );
  const ok = responses.filter((r) => r.status === 200);
  const bodies = new Set(await Promise.all(ok.map((r) => r.text())));
  assert.equal(bodies.size, 1);
  for (const r of responses) assert.ok(r.status === 200 || r.status === 409, `status ${r.status}`);
  assert.equal(await balanceOf(service, 'solana-devnet', buyer.address), 5_000_000n - (await price('solana-devnet')));
});

test('a garbage Solana payload is a 402 with a reason, and nothing moves', async () => {
  const proof = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'solana-devnet', payload: { transaction: 'not-a-transaction' } })).toString('base64');
  const response = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'solana-devnet', 'X-PAYMENT': proof });
  assert.equal(response.status, 402);
  assert.match(((await response.json()) as { error: string }).error, /invalid_payload/);
});

test('the Solana payer reads its result back with an ed25519 signature of the receipt challenge', async () => {
  const buyer = await fundedSolanaBuyer(service, ['solana-devnet'], 5_000_000n);
  const pay = wrapFetchV1(fetch, buyer as never, undefined, undefined, { svmConfig: { rpcUrl: rpcUrl('solana-devnet') } });
  const response = await pay(`${service.url}${PATH}`, { method: 'POST', headers: { ...json, 'X-Network': 'solana-devnet' }, body: JSON.stringify(BODY) });
  assert.equal(response.status, 200);
  const paid = await response.json();
  const { transaction } = decodeReceipt(response.headers.get('x-payment-response'));
  const lookup = async (signer: KeyPairSigner) => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signBytes(signer.keyPair.privateKey, new TextEncoder().encode(receiptChallenge(transaction, timestamp)));
    return fetch(`${service.url}/api/v1/payments/${transaction}`, {
      headers: { 'X-Payer-Timestamp': String(timestamp), 'X-Payer-Signature': getBase58Decoder().decode(signature) },
    });
  };
  const own = await lookup(buyer);
  assert.equal(own.status, 200);
  assert.deepEqual(((await own.json()) as { result: unknown }).result, paid);
  const stranger = await lookup(await generateKeyPairSigner());
  assert.equal(stranger.status, 401);
  assert.equal(((await stranger.json()) as { result?: unknown }).result, undefined);
});
