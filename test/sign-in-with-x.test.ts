// sign-in-with-x (issue 13 item 3): a payer fetches its paid result again by signing in, on EVM (EIP-191 SIWE)
// and Solana (ed25519 SIWS), with real keys signing through @x402/extensions' own client helpers
// (createSIWxPayload, encodeSIWxHeader); nonces are single-use; the wrong signer, a reused nonce, an expired or
// stale message, a forged address and another origin are refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { createSIWxPayload, encodeSIWxHeader, wrapFetchWithSIWx, type SIWxSigner } from '@x402/extensions/sign-in-with-x';
import { startTestService, postJson } from './support/service.ts';
import { payEvm } from './support/paid-call.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer, fundedSolanaBuyer } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';
import { NETWORKS, type NetworkName } from '../src/x402/networks.ts';
import { decodePaymentRequiredHeader } from '@x402/core/http';

const PATH = '/api/v1/ai/images';
const BODY = { prompt: 'a lighthouse on a cliff', n: 1, size: '256x256' };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
});
after(() => service.stop());

interface ChallengeInfo {
  domain: string;
  uri: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  [key: string]: unknown;
}

/** The challenge the 402 carries in PAYMENT-REQUIRED.extensions["sign-in-with-x"], as @x402/core decodes it. */
async function challenge(): Promise<{ info: ChallengeInfo; supportedChains: { chainId: string; type: 'eip191' | 'ed25519' }[] }> {
  const response = await postJson(`${service.url}${PATH}`, BODY);
  assert.equal(response.status, 402);
  const required = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!);
  return required.extensions!['sign-in-with-x'] as never;
}

/**
 * A SIGN-IN-WITH-X header signed by `signer` through the official client helper, `edit` changing the challenge
 * first. A @solana/kit key-pair signer is one of the helper's signer kinds (SolanaKitSigner), typed more loosely.
 */
async function signIn(signer: SIWxSigner | KeyPairSigner, network: NetworkName, edit: (info: ChallengeInfo) => ChallengeInfo = (info) => info): Promise<string> {
  const { info, supportedChains } = await challenge();
  const chain = supportedChains.find((c) => c.chainId === NETWORKS[network].caip2)!;
  const payload = await createSIWxPayload({ ...edit(info), chainId: chain.chainId, type: chain.type } as never, signer as SIWxSigner, `${service.url}${PATH}`);
  return encodeSIWxHeader(payload);
}

const again = (header: string, body: unknown = BODY) => postJson(`${service.url}${PATH}`, body, { 'SIGN-IN-WITH-X': header });
const lookup = (id: string, header: string) => fetch(`${service.url}/api/v1/payments/${id}`, { headers: { 'SIGN-IN-WITH-X': header } });
const reason = async (response: Response) => ((await response.json()) as { error: string; code: string; field?: string });

test('the challenge offers every enabled network with its signature type, bound to this origin', async () => {
  const { info, supportedChains } = await challenge();
  assert.deepEqual(
    new Map(supportedChains.map((c) => [c.chainId, c.type])),
    new Map([
      [NETWORKS.base.caip2, 'eip191'],
      [NETWORKS.solana.caip2, 'ed25519'],
    ]),
  );
  assert.equal(info.domain, new URL(service.url).host);
  assert.equal(info.uri, `${service.url}${PATH}`);
  assert.match(info.nonce, /^[0-9a-f]{32}$/);
  assert.notEqual((await challenge()).info.nonce, info.nonce, 'a fresh nonce each time');
});

test('each 402 is filled in afresh: PAYMENT-REQUIRED is the plain base64 of its JSON, issued now, valid for five minutes', async () => {
  const headers: string[] = [];
  for (let i = 0; i < 3; i++) {
    const before = Date.now();
    const response = await postJson(`${service.url}${PATH}`, BODY);
    const header = response.headers.get('PAYMENT-REQUIRED')!;
    headers.push(header);
    // the header is pre-encoded around the challenge's fresh fields: it must still be exactly base64(JSON)
    const json = Buffer.from(header, 'base64').toString('utf8');
    assert.equal(Buffer.from(json, 'utf8').toString('base64'), header);
    const { info } = (JSON.parse(json) as { extensions: { 'sign-in-with-x': { info: ChallengeInfo } } }).extensions['sign-in-with-x'];
    const issued = Date.parse(info.issuedAt);
    assert.ok(issued >= before - 1 && issued <= Date.now() + 1, `issuedAt ${info.issuedAt} is the time of the answer`);
    assert.equal(Date.parse(info.expirationTime!) - issued, 5 * 60 * 1000);
  }
  assert.equal(new Set(headers).size, headers.length);
});

describe('EVM payer (EIP-191)', () => {
  let buyer: PrivateKeyAccount;
  let paid: { transaction: string; amount: string };
  let paidBody: unknown;
  before(async () => {
    buyer = await fundedEvmBuyer(service, ['base']);
    paid = await payEvm(`${service.url}${PATH}`, BODY, buyer);
    paidBody = (await (await lookup(paid.transaction, await signIn(buyer, 'base'))).json() as { result: unknown }).result;
  });

  test('signing in with the paying key fetches the same result again, with no new charge', async () => {
    const balance = await balanceOf(service, 'base', buyer.address);
    const response = await again(await signIn(buyer, 'base'));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    assert.deepEqual(await response.json(), paidBody);
    assert.ok(paidBody && typeof paidBody === 'object' && 'images' in paidBody);
    assert.equal(await balanceOf(service, 'base', buyer.address), balance);
  });

  test('a nonce is used once: the same header again is refused, and of 20 at once exactly one passes', async () => {
    const header = await signIn(buyer, 'base');
    assert.equal((await again(header)).status, 200);
    const reused = await again(header);
    assert.equal(reused.status, 401);
    assert.match((await reason(reused)).error, /invalid_siwx_nonce/);

    const fresh = await signIn(buyer, 'base');
    const statuses = await Promise.all(Array.from({ length: 20 }, () => again(fresh).then((r) => r.status)));
    assert.deepEqual([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 401).length], [1, 19]);
  });

  test('the official wrapFetchWithSIWx, given the 402, signs in by itself and gets the result', async () => {
    const response = await wrapFetchWithSIWx(fetch, buyer)(`${service.url}${PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
      body: JSON.stringify(BODY),
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), paidBody);
  });

  test('another wallet signs in fine but has paid for nothing: it gets the 402, not the result', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    const response = await again(await signIn(stranger, 'base'));
    assert.equal(response.status, 402);
    assert.equal(((await response.json()) as { x402Version: number }).x402Version, 1);
    const receipt = await lookup(paid.transaction, await signIn(stranger, 'base'));
    assert.equal(receipt.status, 401);
    assert.match((await reason(receipt)).error, /is not the payer/);
  });

  test('the payer signed in for another request it never paid for gets the 402', async () => {
    const response = await again(await signIn(buyer, 'base'), { ...BODY, prompt: 'another prompt' });
    assert.equal(response.status, 402);
  });

  test('a header naming the payer but signed by another key is refused', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = { ...stranger, address: buyer.address } as PrivateKeyAccount; // claims the payer, signs with its own key
    const response = await again(await signIn(forged, 'base'));
    assert.equal(response.status, 401);
    assert.deepEqual(await reason(response), {
      error: 'SIGN-IN-WITH-X refused (invalid_siwx_signature): Signature verification failed',
      code: 'unauthorized',
      field: 'SIGN-IN-WITH-X',
    });
  });

  test('an expired message, one issued too long ago, and one for another origin are refused', async () => {
    const minutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();
    const cases: [(info: ChallengeInfo) => ChallengeInfo, RegExp][] = [
      [(info) => ({ ...info, issuedAt: minutes(-2), expirationTime: minutes(-1) }), /invalid_siwx_expired/],
      [(info) => ({ ...info, issuedAt: minutes(-6), expirationTime: minutes(10) }), /invalid_siwx_issued_at_too_old/],
      [(info) => ({ ...info, domain: 'evil.example', uri: `https://evil.example${PATH}` }), /invalid_siwx_domain_mismatch/],
    ];
    for (const [edit, expected] of cases) {
      // the client helper refuses to sign for another origin than the URL given: sign as if at evil.example
      const header = await signInAt(buyer, edit);
      const response = await again(header);
      assert.equal(response.status, 401, String(expected));
      assert.match((await reason(response)).error, expected);
    }
  });

  test('a malformed header, or a chain the gateway does not take, is refused', async () => {
    assert.match((await reason(await again('not base64!'))).error, /invalid_siwx_payload/);
    const polygon = await signInAt(buyer, (info) => info, 'eip155:137');
    assert.match((await reason(await again(polygon))).error, /invalid_siwx_unsupported_chain/);
  });

  test('the deprecated X-Payer-Signature proof still works beside it', async () => {
    const { receiptChallenge } = await import('../src/x402/receipt-challenge.ts');
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await buyer.signMessage({ message: receiptChallenge(paid.transaction, timestamp) });
    const response = await fetch(`${service.url}/api/v1/payments/${paid.transaction}`, {
      headers: { 'X-Payer-Timestamp': String(timestamp), 'X-Payer-Signature': signature },
    });
    assert.deepEqual(((await response.json()) as { result: unknown }).result, paidBody);
  });
});

test('one transaction that settled several payments (settlementBatching): each payer signing in gets its own result; anyone else the count only', async () => {
  const buyers = [await fundedEvmBuyer(service, ['base']), await fundedEvmBuyer(service, ['base'])];
  const bodies = [{ ...BODY, prompt: 'a red boat' }, { ...BODY, prompt: 'a blue boat' }];
  const paid = [await payEvm(`${service.url}${PATH}`, bodies[0], buyers[0]!), await payEvm(`${service.url}${PATH}`, bodies[1], buyers[1]!)];
  // as a Multicall3 batch leaves them: the second payment's row names the first's transaction
  const [second] = await service.ledger.findByTransaction(paid[1]!.transaction);
  assert.ok(await service.ledger.transition(second!.key, ['settled'], { state: 'settled', txHash: paid[0]!.transaction }));
  const shared = paid[0]!.transaction;
  for (const [index, buyer] of buyers.entries()) {
    const response = await lookup(shared, await signIn(buyer, 'base'));
    assert.equal(response.status, 200);
    const body = (await response.json()) as { payer: string; result: { images: string[] } };
    assert.equal(body.payer.toLowerCase(), buyer.address.toLowerCase(), `payer ${index} sees its own payment`);
    assert.ok(body.result.images.length === 1);
  }
  const stranger = privateKeyToAccount(generatePrivateKey());
  assert.equal((await lookup(shared, await signIn(stranger, 'base'))).status, 401);
  assert.deepEqual(await (await fetch(`${service.url}/api/v1/payments/${shared}`)).json(), { transaction: shared, network: 'base', state: 'settled', payments: 2, resultAvailable: true });
});

/** Signs an edited challenge; the helper checks the challenge against the URL it is given, so give it the challenge's own. */
async function signInAt(signer: SIWxSigner, edit: (info: ChallengeInfo) => ChallengeInfo, chainId = NETWORKS.base.caip2): Promise<string> {
  const info = edit((await challenge()).info);
  const payload = await createSIWxPayload({ ...info, chainId, type: 'eip191' } as never, signer, info.uri);
  return encodeSIWxHeader(payload);
}

describe('Solana payer (ed25519)', () => {
  let buyer: KeyPairSigner;
  let transaction: string;
  let paidBody: unknown;
  before(async () => {
    buyer = await fundedSolanaBuyer(service, ['solana'], 5_000_000n);
    const rpcUrl = service.sandbox!.chains.get('solana')!.rpcUrl;
    const pay = wrapFetchV1(fetch, buyer as never, undefined, undefined, { svmConfig: { rpcUrl } });
    const response = await pay(`${service.url}${PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': 'solana' },
      body: JSON.stringify(BODY),
    });
    assert.equal(response.status, 200, await response.clone().text());
    paidBody = await response.json();
    transaction = decodeReceipt(response.headers.get('x-payment-response')).transaction;
  });

  test('the payer signs in with its key-pair signer and gets its result, on the route and by receipt', async () => {
    const response = await again(await signIn(buyer, 'solana'));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), paidBody);
    const receipt = await lookup(transaction, await signIn(buyer, 'solana'));
    assert.equal(receipt.status, 200);
    assert.deepEqual(((await receipt.json()) as { result: unknown }).result, paidBody);
  });

  test('another Solana wallet is not the payer', async () => {
    const stranger = await generateKeyPairSigner();
    assert.equal((await again(await signIn(stranger, 'solana'))).status, 402);
    assert.equal((await lookup(transaction, await signIn(stranger, 'solana'))).status, 401);
  });
});
