// x402 version 2 beside version 1 on every paid route: each 402 also carries PAYMENT-REQUIRED (checked with
// @x402/core's own schemas), the unmodified @x402/fetch with the standard v2 registration pays every endpoint
// on every sandbox network, and a payment is one payment whichever header carries it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { PaymentRequiredV2Schema, PaymentPayloadV2Schema } from '@x402/core/schemas';
import { appendPaymentIdentifierToExtensions, generatePaymentId, isPaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, fundedSolanaBuyer } from './support/sandbox-wallet.ts';
import { NETWORKS, type NetworkName } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

const ENDPOINTS = [
  { path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'Hello there', max_tokens: 8 } },
  { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } },
  { path: '/api/v1/ai/tts', body: { text: 'Hello world' } },
] as const;
const NETWORK_LIST: NetworkName[] = ['base', 'polygon', 'solana', 'solana-devnet'];
const CHAT = ENDPOINTS[0];

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: NETWORK_LIST });
});
after(() => service.stop());

const decode = (header: string | null): any => {
  assert.ok(header, 'header present');
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
};
/** the headers of a request @x402/fetch sends (a Request whose class is not this realm's global one) */
const sentHeaders = (input: Parameters<typeof fetch>[0], init?: RequestInit): Headers =>
  new Headers(init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined));
const rpcUrl = (network: NetworkName) => service.sandbox!.chains.get(network)!.rpcUrl;

async function quote(path: string, body: unknown, network: string) {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': network });
  assert.equal(response.status, 402);
  return { v1: (await response.json()) as any, v2: decode(response.headers.get('PAYMENT-REQUIRED')), response };
}

/** successful generations so far, from /metrics */
async function generations(capability: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('generations_total{') && l.includes(`capability="${capability}"`) && l.includes('outcome="success"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The v2 proof @x402/fetch makes for a call (it is stopped before the paid request is sent). */
async function v2Proof(network: NetworkName, path: string, body: unknown): Promise<string> {
  let proof = '';
  const capture: typeof fetch = async (input, init) => {
    const header = sentHeaders(input, init).get('PAYMENT-SIGNATURE');
    if (header) {
      proof = header;
      return new Response('{}', { status: 499 });
    }
    return fetch(input, init);
  };
  const buyer = await fundedEvmBuyer(service, [network]);
  await wrapFetchWithPayment(capture, registerExactEvmScheme(new x402Client(), { signer: buyer }))(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': network },
    body: JSON.stringify(body),
  });
  assert.ok(proof, 'the client signed a v2 proof');
  return proof;
}

describe('every 402 speaks both versions', () => {
  for (const endpoint of ENDPOINTS) {
    for (const network of [...NETWORK_LIST, NETWORKS.base.caip2, NETWORKS.solana.caip2]) {
      test(`${endpoint.path}, X-Network ${network}: PAYMENT-REQUIRED mirrors the v1 body`, async () => {
        const { v1, v2, response } = await quote(endpoint.path, endpoint.body, network);
        assert.equal(response.headers.get('cache-control'), 'no-store');
        const header = response.headers.get('PAYMENT-REQUIRED')!;
        // with the bazaar and sign-in-with-x extensions, chat's upto offer with its gas sponsoring and the
        // batch-settlement offer (test/discovery.test.ts checks every network at once)
        assert.ok(header.length < 7.8 * 1024, `PAYMENT-REQUIRED is ${header.length} bytes`);
        const parsed = PaymentRequiredV2Schema.safeParse(v2);
        assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
        assert.equal(v2.x402Version, 2);
        assert.equal(v2.error, v1.error);
        assert.equal(v2.resource.url, `${service.url}${endpoint.path}`);
        assert.equal(v2.resource.mimeType, 'application/json');
        assert.equal(typeof v2.resource.serviceName, 'string');
        const name = v1.accepts[0].network as NetworkName;
        // chat on an EVM network is also offered metered (upto, v2 only) after its exact requirement
        const metered = endpoint.path === CHAT.path && NETWORKS[name].family === 'evm';
        const channels = NETWORKS[name].family === 'evm' ? ['batch-settlement', 'auth-capture'] : [];
        assert.deepEqual(v2.accepts.map((a: any) => a.scheme), [...(metered ? ['exact', 'upto'] : ['exact']), ...channels]);
        const [a2, a1] = [v2.accepts[0], v1.accepts[0]];
        assert.equal(NETWORKS[name].caip2, a2.network);
        assert.ok(network === name || network === NETWORKS[name].caip2, 'either spelling of X-Network names the same network');
        assert.equal(a2.amount, a1.maxAmountRequired);
        assert.deepEqual([a2.scheme, a2.payTo, a2.asset, a2.maxTimeoutSeconds, a2.extra], [a1.scheme, a1.payTo, a1.asset, a1.maxTimeoutSeconds, a1.extra]);
      });
    }
  }

  test('without X-Network every network is offered, EVM first, on both wires', async () => {
    const response = await postJson(`${service.url}${CHAT.path}`, CHAT.body);
    const v2 = decode(response.headers.get('PAYMENT-REQUIRED'));
    const v1 = (await response.json()) as any;
    const exact = v2.accepts.filter((a: any) => a.scheme === 'exact');
    assert.deepEqual(exact.map((a: any) => a.network), v1.accepts.map((a: any) => NETWORKS[a.network as NetworkName].caip2));
    // every scheme on every network (test/discovery.test.ts counts them): within the 16 KB of headers Node's and
    // undici's clients take
    assert.ok(response.headers.get('PAYMENT-REQUIRED')!.length < 12 * 1024);
  });

  test('CORS lets a browser send PAYMENT-SIGNATURE and read PAYMENT-REQUIRED and PAYMENT-RESPONSE', async () => {
    const preflight = await fetch(`${service.url}${CHAT.path}`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'payment-signature' },
    });
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /PAYMENT-SIGNATURE/);
    // the official openai and anthropic SDKs, used from a page, send their own headers: allowed (and ignored)
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
    for (const header of ['authorization', 'x-api-key', 'anthropic-version', 'anthropic-dangerous-direct-browser-access', 'x-stainless-os', 'x-stainless-retry-count']) {
      assert.ok(allowed.includes(header), header);
    }
    const quoteResponse = await postJson(`${service.url}${CHAT.path}`, CHAT.body, { Origin: 'https://example.com', 'X-Network': 'base' });
    const exposed = quoteResponse.headers.get('access-control-expose-headers') ?? '';
    assert.match(exposed, /PAYMENT-REQUIRED/);
    assert.match(exposed, /PAYMENT-RESPONSE/);
  });
});

describe('@x402/fetch with the standard v2 registration pays every endpoint on every network', () => {
  for (const network of NETWORK_LIST) {
    for (const endpoint of ENDPOINTS) {
      test(`${endpoint.path} on ${network}`, async () => {
        const family = NETWORKS[network].family;
        const payTo = service.rails.get(network)!.payTo;
        const price = BigInt((await quote(endpoint.path, endpoint.body, network)).v2.accepts[0].amount);
        let client: x402Client;
        let address: string;
        if (family === 'evm') {
          const buyer = await fundedEvmBuyer(service, [network]);
          client = registerExactEvmScheme(new x402Client(), { signer: buyer });
          address = buyer.address;
        } else {
          const buyer = await fundedSolanaBuyer(service, [network], 5_000_000n);
          client = new x402Client().register(NETWORKS[network].caip2 as `${string}:${string}`, new ExactSvmScheme(buyer, { rpcUrl: rpcUrl(network) }));
          address = buyer.address;
        }
        const [buyerBefore, payToBefore] = [await balanceOf(service, network, address), await balanceOf(service, network, payTo)];
        let sentV2 = false;
        const spy: typeof fetch = (input, init) => {
          if (sentHeaders(input, init).has('PAYMENT-SIGNATURE')) sentV2 = true;
          return fetch(input, init);
        };
        const response = await wrapFetchWithPayment(spy, client)(`${service.url}${endpoint.path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Network': network },
          body: JSON.stringify(endpoint.body),
        });
        assert.equal(response.status, 200, await response.clone().text());
        assert.ok(sentV2, 'the client paid on the v2 wire');
        assert.equal(response.headers.get('X-PAYMENT-RESPONSE'), null, 'a v2 proof is answered on v2 only');
        const receipt = decode(response.headers.get('PAYMENT-RESPONSE'));
        assert.equal(receipt.success, true);
        assert.equal(receipt.network, NETWORKS[network].caip2);
        assert.equal(receipt.payer.toLowerCase(), address.toLowerCase());
        assert.ok(receipt.transaction.length > 0);
        assert.equal(await balanceOf(service, network, address), buyerBefore - price);
        assert.equal(await balanceOf(service, network, payTo), payToBefore + price);
      });
    }
  }
});

describe('one payment whichever header carries it', () => {
  test('50 concurrent uses of one v2 proof: one generation, one settlement, one result', async () => {
    const proof = await v2Proof('base', CHAT.path, CHAT.body);
    const payer = PaymentPayloadV2Schema.parse(decode(proof)).payload.authorization as { from: string };
    const before = await generations('chat');
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'PAYMENT-SIGNATURE': proof })),
    );
    for (const r of responses) assert.ok(r.status === 200 || r.status === 409, `status ${r.status}`);
    const ok = responses.filter((r) => r.status === 200);
    assert.ok(ok.length >= 1);
    assert.equal(new Set(await Promise.all(ok.map((r) => r.text()))).size, 1);
    assert.equal(new Set(ok.map((r) => decode(r.headers.get('PAYMENT-RESPONSE')).transaction)).size, 1);
    assert.equal((await generations('chat')) - before, 1);
    const price = BigInt((await quote(CHAT.path, CHAT.body, 'base')).v2.accepts[0].amount);
    assert.equal(await balanceOf(service, 'base', payer.from), 10_000_000n - price);
  });

  test('a v1 proof of an authorization paid in v2 gets the same result, not a second charge', async () => {
    const proof = await v2Proof('base', CHAT.path, CHAT.body);
    const v2 = decode(proof);
    const v1 = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload: v2.payload })).toString('base64');
    const first = await postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'PAYMENT-SIGNATURE': proof });
    assert.equal(first.status, 200);
    const again = await postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'X-PAYMENT': v1 });
    assert.equal(again.status, 200);
    assert.equal(await again.text(), await first.text());
    const [r2, r1] = [decode(first.headers.get('PAYMENT-RESPONSE')), decode(again.headers.get('X-PAYMENT-RESPONSE'))];
    assert.equal(r1.transaction, r2.transaction);
    assert.equal(r1.network, 'base');
    const price = BigInt(v2.accepted.amount);
    assert.equal(await balanceOf(service, 'base', v2.payload.authorization.from), 10_000_000n - price);
  });

  test('both headers: the same payment is accepted and answered on both wires; different payments are a 400', async () => {
    const proof = await v2Proof('base', CHAT.path, CHAT.body);
    const v2 = decode(proof);
    const sameV1 = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload: v2.payload })).toString('base64');
    const other = decode(await v2Proof('base', CHAT.path, CHAT.body));
    const otherV1 = Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload: other.payload })).toString('base64');

    const mismatched = await postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'PAYMENT-SIGNATURE': proof, 'X-PAYMENT': otherV1 });
    assert.equal(mismatched.status, 400);
    assert.equal(((await mismatched.json()) as { code: string }).code, 'payment_mismatch');

    const both = await postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'PAYMENT-SIGNATURE': proof, 'X-PAYMENT': sameV1 });
    assert.equal(both.status, 200, await both.clone().text());
    assert.equal(decode(both.headers.get('PAYMENT-RESPONSE')).network, 'eip155:8453');
    assert.equal(decode(both.headers.get('X-PAYMENT-RESPONSE')).network, 'base');
  });

  test('a v2 proof is checked against the server\'s own requirement for this body', async () => {
    const proof = decode(await v2Proof('base', CHAT.path, CHAT.body));
    const send = (doc: unknown, body: unknown = CHAT.body) =>
      postJson(`${service.url}${CHAT.path}`, body, { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(doc)).toString('base64') });

    const cheaper = await send({ ...proof, accepted: { ...proof.accepted, amount: '1' } });
    assert.equal(cheaper.status, 402);
    assert.match(decode(cheaper.headers.get('PAYMENT-REQUIRED')).error, /invalid_amount/);

    // the signed authorization itself, tampered under an honest `accepted`: refused before any chain work
    const authorization = proof.payload.authorization;
    const lessValue = await send({ ...proof, payload: { ...proof.payload, authorization: { ...authorization, value: '1' } } });
    assert.equal(lessValue.status, 402);
    assert.match(decode(lessValue.headers.get('PAYMENT-REQUIRED')).error, /invalid_exact_evm_payload_authorization_value/);
    const elsewhere = { ...authorization, to: '0x000000000000000000000000000000000000dEaD' };
    const redirected = await send({ ...proof, payload: { ...proof.payload, authorization: elsewhere } });
    assert.equal(redirected.status, 402);
    assert.match(((await redirected.json()) as { error: string }).error, /recipient_mismatch/);
    const forged = await send({ ...proof, payload: { ...proof.payload, signature: `0x${'22'.repeat(65)}` } });
    assert.equal(forged.status, 402, 'a signature that does not recover to the payer');
    assert.equal(await balanceOf(service, 'base', authorization.from), 10_000_000n, 'nothing moved');

    const version = await send({ ...proof, x402Version: 1 });
    assert.equal(version.status, 402);
    assert.match(((await version.json()) as { error: string }).error, /unsupported_x402_version/);

    const garbage = await postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'PAYMENT-SIGNATURE': 'not base64!' });
    assert.equal(garbage.status, 402);
    assert.match(((await garbage.json()) as { error: string }).error, /PAYMENT-SIGNATURE is not base64/);

    const unknownNetwork = await send({ ...proof, accepted: { ...proof.accepted, network: 'eip155:1' } });
    assert.equal(unknownNetwork.status, 400);
    assert.equal(((await unknownNetwork.json()) as { code: string }).code, 'unsupported_network');
  });
});

describe('payment-identifier: a client-chosen id bound to the exact payment', () => {
  const withId = (proof: any, id: string): string =>
    Buffer.from(JSON.stringify({ ...proof, extensions: appendPaymentIdentifierToExtensions({ ...(proof.extensions ?? {}) }, id) })).toString('base64');
  const send = (header: string) => postJson(`${service.url}${CHAT.path}`, CHAT.body, { 'PAYMENT-SIGNATURE': header });

  test('every 402 declares it, optional', async () => {
    const { v2 } = await quote(CHAT.path, CHAT.body, 'base');
    assert.ok(isPaymentIdentifierExtension(v2.extensions[PAYMENT_IDENTIFIER]));
    assert.equal(v2.extensions[PAYMENT_IDENTIFIER].info.required, false);
  });

  test('same id, same payment, 10 at once then again: one generation, one charge, the stored response', async () => {
    const proof = decode(await v2Proof('base', CHAT.path, CHAT.body));
    assert.ok(proof.extensions?.[PAYMENT_IDENTIFIER], '@x402/fetch echoes the declared extension');
    const header = withId(proof, generatePaymentId());
    const before = await generations('chat');
    const first = await Promise.all(Array.from({ length: 10 }, () => send(header)));
    for (const r of first) assert.ok(r.status === 200 || r.status === 409, `status ${r.status}`);
    const again = await send(header);
    assert.equal(again.status, 200);
    const ok = [...first.filter((r) => r.status === 200), again];
    assert.equal(new Set(await Promise.all(ok.map((r) => r.text()))).size, 1);
    assert.equal(new Set(ok.map((r) => decode(r.headers.get('PAYMENT-RESPONSE')).transaction)).size, 1);
    assert.equal((await generations('chat')) - before, 1);
    assert.equal(await balanceOf(service, 'base', proof.payload.authorization.from), 10_000_000n - BigInt(proof.accepted.amount));
  });

  test('same id, another payment: 409, nothing moves', async () => {
    const id = generatePaymentId();
    const paid = decode(await v2Proof('base', CHAT.path, CHAT.body));
    assert.equal((await send(withId(paid, id))).status, 200);

    const other = decode(await v2Proof('base', CHAT.path, CHAT.body));
    const conflict = await send(withId(other, id));
    assert.equal(conflict.status, 409);
    assert.equal(((await conflict.json()) as { code: string }).code, 'payment_id_conflict');
    assert.equal(await balanceOf(service, 'base', other.payload.authorization.from), 10_000_000n, 'the other payment was not taken');
    // the refused payment was released, not spent: it still pays under an id of its own
    assert.equal((await send(withId(other, generatePaymentId()))).status, 200);
  });

  test('an id cannot be squatted: a proof that does not verify binds nothing, the real payer keeps its id', async () => {
    const id = generatePaymentId();
    const real = decode(await v2Proof('base', CHAT.path, CHAT.body));
    // a stranger who learnt the id sends junk under it first (its signature is garbage)
    const junk = { ...real, payload: { ...real.payload, signature: '0x' + '11'.repeat(65) } };
    for (let i = 0; i < 3; i++) assert.equal((await send(withId(junk, id))).status, 402);
    const paid = await send(withId(real, id));
    assert.equal(paid.status, 200);
    assert.equal(await balanceOf(service, 'base', real.payload.authorization.from), 10_000_000n - BigInt(real.accepted.amount));
  });

  test('two payments racing under one id: exactly one runs', async () => {
    const id = generatePaymentId();
    const [a, b] = [decode(await v2Proof('base', CHAT.path, CHAT.body)), decode(await v2Proof('base', CHAT.path, CHAT.body))];
    const before = await generations('chat');
    const statuses = (await Promise.all([send(withId(a, id)), send(withId(b, id))])).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409]);
    assert.equal((await generations('chat')) - before, 1);
  });

  test('an id that is not one is a 400 naming the header', async () => {
    const proof = decode(await v2Proof('base', CHAT.path, CHAT.body));
    const header = Buffer.from(JSON.stringify({ ...proof, extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id: 'short' } } } })).toString('base64');
    const response = await send(header);
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { field: string }).field, 'PAYMENT-SIGNATURE');
  });
});
