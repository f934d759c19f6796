// The money promises of the gate, at the HTTP level against the real server and a sandbox chain:
// tampered proofs are refused with a specific reason and move nothing; one proof used 50 times at once
// runs one generation and one settlement; a settlement that cannot be confirmed in time is kept pending,
// reconciled, and delivered to a retry of the same proof.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof, type ProofOverrides } from './support/evm-proof.ts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const BODY = { prompt: 'a quiet harbour', n: 1, size: '256x256' };
const PATH = '/api/v1/ai/images';
const BASE_CHAIN_ID = 8453;

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base', 'polygon'], config: { settlementTimeoutMs: 4000 } });
});
after(() => service.stop());

async function requirementFor(body: unknown = BODY, network = 'base'): Promise<PaymentRequirements> {
  const response = await postJson(`${service.url}${PATH}`, body, { 'X-Network': network });
  return ((await response.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
}

async function generations(): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const match = /generations_total\{capability="image",outcome="success"\} (\d+)/.exec(text);
  return Number(match?.[1] ?? 0);
}

const payTo = () => service.rails.get('base')!.payTo;
const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');

describe('tampered proofs are refused with a specific reason, and nothing moves', () => {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const other = privateKeyToAccount(generatePrivateKey());
  const cases: { name: string; overrides?: (r: PaymentRequirements) => ProofOverrides; header?: string; status: number; reason: RegExp }[] = [
    { name: 'wrong payTo', overrides: () => ({ to: other.address }), status: 402, reason: /recipient_mismatch/ },
    { name: 'amount too low', overrides: (r) => ({ value: BigInt(r.maxAmountRequired) - 1n }), status: 402, reason: /authorization_value/ },
    { name: 'amount too high', overrides: (r) => ({ value: BigInt(r.maxAmountRequired) + 1n }), status: 402, reason: /authorization_value/ },
    { name: 'wrong asset', overrides: () => ({ verifyingContract: other.address }), status: 402, reason: /signature/ },
    { name: 'payload network differs from X-Network', overrides: () => ({ network: 'polygon' }), status: 400, reason: /network_mismatch|X-Network is base/ },
    { name: 'signature for another chain id', overrides: () => ({ chainId: 137 }), status: 402, reason: /signature/ },
    { name: 'expired validBefore', overrides: () => ({ validBefore: now - 1n }), status: 402, reason: /valid_before/ },
    { name: 'future validAfter', overrides: () => ({ validAfter: now + 3600n }), status: 402, reason: /valid_after/ },
    { name: 'signature by another key', overrides: () => ({ signer: other }), status: 402, reason: /signature/ },
    { name: 'unknown scheme', overrides: () => ({ scheme: 'upto' }), status: 402, reason: /unsupported_scheme/ },
    { name: 'unsupported x402Version', overrides: () => ({ x402Version: 7 }), status: 402, reason: /unsupported_x402_version/ },
    { name: 'malformed base64', header: '%%% not base64 %%%', status: 402, reason: /not base64-encoded JSON/ },
    { name: 'malformed JSON', header: encode('{"x402Version": 1, '), status: 402, reason: /not base64-encoded JSON/ },
    { name: 'JSON of the wrong shape', header: encode({ hello: 'world' }), status: 402, reason: /must hold/ },
  ];

  for (const c of cases) {
    test(c.name, async () => {
      const buyer = await fundedEvmBuyer(service, ['base']);
      const requirement = await requirementFor();
      const header = c.header ?? (await signEvmProof(buyer, requirement, BASE_CHAIN_ID, c.overrides?.(requirement)));
      const [buyerBefore, payToBefore] = [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo())];
      const response = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': header });
      assert.equal(response.status, c.status);
      const body = (await response.json()) as { error: string; accepts?: unknown[] };
      assert.match(body.error, c.reason);
      if (c.status === 402) assert.equal(body.accepts?.length, 1, 'a refused proof comes with the requirement to pay again');
      assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore);
      assert.equal(await balanceOf(service, 'base', payTo()), payToBefore);
    });
  }

  test('a nonce already settled cannot pay for another request', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const requirement = await requirementFor();
    const nonce = `0x${'ab'.repeat(32)}` as const;
    const first = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': await signEvmProof(buyer, requirement, BASE_CHAIN_ID, { nonce }) });
    assert.equal(first.status, 200);
    const balance = await balanceOf(service, 'base', buyer.address);
    const otherBody = { ...BODY, prompt: 'a loud harbour' };
    const again = await signEvmProof(buyer, await requirementFor(otherBody), BASE_CHAIN_ID, { nonce });
    const second = await postJson(`${service.url}${PATH}`, otherBody, { 'X-Network': 'base', 'X-PAYMENT': again });
    assert.equal(second.status, 402);
    // answered as any proof with a spent nonce is: what the chain says, nothing from the ledger
    assert.match(((await second.json()) as { error: string }).error, /^nonce_already_used$/);
    assert.equal(await balanceOf(service, 'base', buyer.address), balance);
  });
});

test('50 simultaneous uses of one proof: one generation, one settlement, one result', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const requirement = await requirementFor();
  const proof = await signEvmProof(buyer, requirement, BASE_CHAIN_ID);
  const [balanceBefore, generationsBefore] = [await balanceOf(service, 'base', buyer.address), await generations()];

  const responses = await Promise.all(
    Array.from({ length: 50 }, () => postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof })),
  );
  const statuses = responses.map((r) => r.status);
  const bodies = await Promise.all(responses.map((r) => r.json() as Promise<Record<string, unknown>>));
  const results = new Set(bodies.filter((_, i) => statuses[i] === 200).map((b) => JSON.stringify(b)));

  assert.equal(results.size, 1, 'every 200 carries the one stored result');
  for (const [i, status] of statuses.entries()) {
    if (status !== 200) {
      assert.equal(status, 409);
      // still generating, or already settling: either way, retry the same proof later
      assert.ok(['payment_in_progress', 'settlement_pending'].includes(String(bodies[i]!.code)));
    }
  }
  assert.equal((await generations()) - generationsBefore, 1);
  assert.equal(await balanceOf(service, 'base', buyer.address), balanceBefore - BigInt(requirement.maxAmountRequired));
});

test('a settlement not confirmed in time stays pending, is reconciled, and the same proof then gets the result', async () => {
  const mining = service.sandbox!.chains.get('base')!.mining!;
  const buyer = await fundedEvmBuyer(service, ['base']);
  const requirement = await requirementFor();
  const proof = await signEvmProof(buyer, requirement, BASE_CHAIN_ID);
  const balanceBefore = await balanceOf(service, 'base', buyer.address);

  await mining.setAutomine(false);
  let pending: Response;
  try {
    pending = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
    assert.equal(pending.status, 409);
    const body = (await pending.json()) as { code: string; transaction: string; error: string };
    assert.equal(body.code, 'settlement_pending');
    assert.match(body.transaction, /^0x[0-9a-f]{64}$/);
    assert.match(body.error, /do not pay again/);
    assert.ok(pending.headers.get('retry-after'));

    const retried = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
    assert.equal(retried.status, 409, 'still pending: the retry is told to wait, not to pay');
  } finally {
    await mining.mine();
    await mining.setAutomine(true);
  }
  await service.reconciler.runOnce();

  const delivered = await postJson(`${service.url}${PATH}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
  assert.equal(delivered.status, 200);
  assert.equal(((await delivered.json()) as { images: string[] }).images.length, 1);
  assert.ok(delivered.headers.get('x-payment-response'));
  assert.equal(await balanceOf(service, 'base', buyer.address), balanceBefore - BigInt(requirement.maxAmountRequired));
});
