// Payment-safety promises of the gate on EVM that test/payment-safety.test.ts (tampering matrix, 50
// concurrent uses of one proof, pending -> reconciled) and test/crash-recovery.test.ts (SIGKILL between
// broadcast and receipt) do not already prove, at the HTTP level against the real server and a sandbox chain:
// - refusals that need the chain's state (an authorization already spent elsewhere, a payer without funds)
//   or a subtler forgery (the malleable twin of a valid signature), each with its exact reason;
// - a generation that fails is never charged and does not burn the proof, even under concurrent use;
// - a settlement that does not land (front-run by the payer, or dropped from the mempool) is never charged,
//   and its result is withheld;
// - a gateway killed mid-generation (before any settlement) charges nothing, and its next start frees the
//   proof so a retry pays once and gets the result.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, http, parseGwei, parseSignature, serializeSignature, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { unusedPort } from './support/ports.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof, type ProofOverrides } from './support/evm-proof.ts';
import { CHAT_PATH, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { eip3009Abi } from '../src/payments/facilitators/evm/eip3009-abi.ts';
import { evmPaymentKey } from '../src/x402/payment-key.ts';
import type { RunningService } from '../src/service.ts';
import type { EvmExactPayload, PaymentRequirements } from '../src/x402/types.ts';

const IMAGES = '/api/v1/ai/images';
const CHAT = '/api/v1/ai/chat';
const IMAGE_BODY = { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' };
/** served by a provider whose upstream port is closed: every generation fails */
const BROKEN_CHAT_BODY = { model: 'down/chat', prompt: 'Tell me about the sea', max_tokens: 32 };
const BASE_CHAIN_ID = 8453;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

async function startGateway(config: Record<string, unknown> = {}): Promise<RunningService> {
  const port = await unusedPort();
  return startTestService({
    networks: ['base'],
    config: {
      providers: { down: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeoutMs: 2_000 } },
      models: [
        ...embeddedModels(),
        { id: 'down/chat', provider: 'down', upstreamModel: 'gpt-x', capability: 'chat', maxTokens: 256, defaultMaxTokens: 64, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' } },
      ],
      ...config,
    },
  });
}

// Helpers bound to one running gateway.
function gatewayHelpers(service: () => RunningService) {
  const chain = () => service().sandbox!.chains.get('base')!;
  const payTo = () => service().rails.get('base')!.payTo;
  return {
    chain,
    payTo,
    async requirement(path: string, body: unknown): Promise<PaymentRequirements> {
      const response = await postJson(`${service().url}${path}`, body, { 'X-Network': 'base' });
      assert.equal(response.status, 402);
      return ((await response.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    },
    pay(path: string, body: unknown, proof: string, network = 'base'): Promise<Response> {
      return postJson(`${service().url}${path}`, body, { 'X-Network': network, 'X-PAYMENT': proof });
    },
    /** the same payment on the v2 wire: PAYMENT-SIGNATURE with the requirement it accepted */
    payV2(path: string, body: unknown, proof: string, requirement: PaymentRequirements): Promise<Response> {
      const { scheme, maxAmountRequired, asset, payTo, maxTimeoutSeconds, extra } = requirement;
      const accepted = { scheme, network: 'eip155:8453', amount: maxAmountRequired, asset, payTo, maxTimeoutSeconds, extra };
      const v2 = { x402Version: 2, accepted, payload: decodeProof(proof).payload };
      return postJson(`${service().url}${path}`, body, { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(v2)).toString('base64') });
    },
    /** on-chain balances of the payer and of payTo */
    async balances(payer: string): Promise<[bigint, bigint]> {
      return [await balanceOf(service(), 'base', payer), await balanceOf(service(), 'base', payTo())];
    },
    /** the ledger row of a proof */
    row(proof: string) {
      return service().ledger.get(evmPaymentKey(BASE_CHAIN_ID, chain().asset, decodeProof(proof).payload));
    },
    async generations(capability: string, outcome: 'success' | 'failure'): Promise<number> {
      const text = await (await fetch(`${service().url}/metrics`)).text();
      const match = new RegExp(`generations_total\\{capability="${capability}",outcome="${outcome}"\\} (\\d+)`).exec(text);
      return Number(match?.[1] ?? 0);
    },
    mediaFiles(): number {
      try {
        return readdirSync(join(service().config.dataDir, 'media')).length;
      } catch {
        return 0;
      }
    },
    async rpc(method: string, params: unknown[] = []): Promise<unknown> {
      const response = await postJson(chain().rpcUrl, { jsonrpc: '2.0', id: 1, method, params });
      const answer = (await response.json()) as { result?: unknown; error?: { message: string } };
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      return answer.result;
    },
  };
}

function decodeProof(header: string): { network: string; payload: EvmExactPayload } {
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
}

function encodeProof(proof: unknown): string {
  return Buffer.from(JSON.stringify(proof)).toString('base64');
}

/** Sends the payer's own transferWithAuthorization (signed like a proof) straight to the chain. */
async function spendDirectly(
  chain: { rpcUrl: string; asset: string },
  payer: PrivateKeyAccount,
  proof: string,
  priorityFee = parseGwei('1'),
): Promise<Hex> {
  const { signature, authorization: a } = decodeProof(proof).payload;
  const { r, s, v, yParity } = parseSignature(signature as Hex);
  const wallet = createWalletClient({ account: payer, transport: http(chain.rpcUrl) });
  return wallet.writeContract({
    chain: { id: BASE_CHAIN_ID, name: 'base (sandbox)', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [chain.rpcUrl] } } },
    address: chain.asset as Hex,
    abi: eip3009Abi,
    functionName: 'transferWithAuthorization',
    args: [a.from as Hex, a.to as Hex, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce as Hex, Number(v ?? 27n + BigInt(yParity)), r, s],
    gas: 200_000n,
    maxPriorityFeePerGas: priorityFee,
    maxFeePerGas: priorityFee + parseGwei('100'),
  });
}

describe('refusals that depend on the chain or on a subtler forgery', () => {
  let service: RunningService;
  const gw = gatewayHelpers(() => service);
  before(async () => {
    service = await startGateway();
  });
  after(() => service.stop());

  /** Pays with a tampered proof and checks the exact refusal, and that no funds moved. */
  async function refused(payer: PrivateKeyAccount, proof: string, expected: { status: number; error: string | RegExp }): Promise<void> {
    const before = await gw.balances(payer.address);
    const response = await gw.pay(IMAGES, IMAGE_BODY, proof);
    assert.equal(response.status, expected.status);
    const body = (await response.json()) as { error: string; code?: string; accepts?: unknown[] };
    if (typeof expected.error === 'string') assert.equal(expected.status === 402 ? body.error : body.code, expected.error);
    else assert.match(body.error, expected.error);
    assert.equal(response.headers.get('x-payment-response'), null, 'no settlement receipt');
    assert.deepEqual(await gw.balances(payer.address), before, 'no funds moved');
  }

  async function proofFor(payer: PrivateKeyAccount, overrides?: (r: PaymentRequirements) => ProofOverrides): Promise<string> {
    const requirement = await gw.requirement(IMAGES, IMAGE_BODY);
    return signEvmProof(payer, requirement, BASE_CHAIN_ID, overrides?.(requirement));
  }

  test('an authorization the payer already spent on-chain, outside this gateway', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
    const nonce = `0x${'5e'.repeat(32)}` as const;
    // the payer spends nonce N with another merchant first; the gateway's ledger has never seen it
    const spent = await spendDirectly(gw.chain(), payer, await proofFor(payer, () => ({ to: elsewhere, nonce })));
    const receipt = await createPublicClient({ transport: http(gw.chain().rpcUrl) }).waitForTransactionReceipt({ hash: spent, pollingInterval: 50 });
    assert.equal(receipt.status, 'success', 'the payer spent the authorization elsewhere');
    assert.equal(await balanceOf(service, 'base', elsewhere), BigInt((await gw.requirement(IMAGES, IMAGE_BODY)).maxAmountRequired));

    const proof = await proofFor(payer, () => ({ nonce }));
    await refused(payer, proof, { status: 402, error: 'nonce_already_used' });
    assert.equal((await gw.row(proof))?.state, 'released', 'refused after reservation: the row is released');
  });

  test('validBefore inside the margin needed to settle', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const now = BigInt(Math.floor(Date.now() / 1000));
    await refused(payer, await proofFor(payer, () => ({ validBefore: now + 3n })), { status: 402, error: 'invalid_exact_evm_payload_authorization_valid_before' });
  });

  test('a payer without the funds', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await refused(payer, await proofFor(payer), { status: 402, error: 'insufficient_funds' });
  });

  test('the malleable high-s twin of a valid signature', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const proof = decodeProof(await proofFor(payer)) as { payload: EvmExactPayload };
    const { r, s, yParity } = parseSignature(proof.payload.signature as Hex);
    // (r, n - s, flipped parity) recovers the same signer; USDC rejects it, so must we
    const twin = serializeSignature({ r, s: `0x${(SECP256K1_N - BigInt(s)).toString(16).padStart(64, '0')}`, yParity: 1 - yParity });
    proof.payload.signature = twin;
    await refused(payer, encodeProof(proof), { status: 402, error: 'invalid_exact_evm_payload_signature' });
  });

  test('signature, asset and chain forgeries name the signature as the reason', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const other = privateKeyToAccount(generatePrivateKey());
    for (const overrides of [{ signer: other }, { verifyingContract: other.address }, { chainId: 137 }] satisfies ProofOverrides[]) {
      await refused(payer, await proofFor(payer, () => overrides), { status: 402, error: 'invalid_exact_evm_payload_signature' });
    }
  });

  test('a payload that is not an EIP-3009 authorization', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    await refused(payer, encodeProof({ x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x00' } }), {
      status: 402,
      error: 'invalid_payload: not an EIP-3009 authorization',
    });
  });

  test('a network this gateway does not serve, named by X-Network or by the proof', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const proof = await proofFor(payer);
    const before = await gw.balances(payer.address);
    const byHeader = await gw.pay(IMAGES, IMAGE_BODY, proof, 'polygon');
    assert.equal(byHeader.status, 400);
    assert.equal(((await byHeader.json()) as { code: string }).code, 'unsupported_network');
    const byProof = await gw.pay(IMAGES, IMAGE_BODY, encodeProof({ ...decodeProof(proof), network: 'polygon' }));
    assert.equal(byProof.status, 400);
    assert.equal(((await byProof.json()) as { code: string }).code, 'unsupported_network');
    assert.deepEqual(await gw.balances(payer.address), before);
    // refused before the ledger: the proof itself is untouched and still pays
    assert.equal(await gw.row(proof), undefined);
    assert.equal((await gw.pay(IMAGES, IMAGE_BODY, proof)).status, 200);
  });
});

describe('a generation that fails is never charged', () => {
  let service: RunningService;
  const gw = gatewayHelpers(() => service);
  before(async () => {
    service = await startGateway();
  });
  after(() => service.stop());

  test('an unreachable upstream: 5xx, nothing moves, the reservation is released and the proof still usable', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const proof = await signEvmProof(payer, await gw.requirement(CHAT, BROKEN_CHAT_BODY), BASE_CHAIN_ID);
    const before = await gw.balances(payer.address);
    const failuresBefore = await gw.generations('chat', 'failure');

    for (let attempt = 1; attempt <= 2; attempt++) {
      const response = await gw.pay(CHAT, BROKEN_CHAT_BODY, proof);
      assert.ok([502, 503, 504].includes(response.status), `status ${response.status}`);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      const body = (await response.json()) as { code: string; error: string };
      assert.match(body.code, /^upstream_/);
      assert.equal(response.headers.get('x-payment-response'), null, 'no settlement receipt');
      assert.deepEqual(await gw.balances(payer.address), before, 'no funds moved');
      assert.equal((await gw.row(proof))?.state, 'released');
      // the second attempt runs the generation again: the failed one did not burn the proof
      assert.equal((await gw.generations('chat', 'failure')) - failuresBefore, attempt);
    }
  });

  test('20 simultaneous uses of one proof on a failing model: no 200, no charge, released', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const proof = await signEvmProof(payer, await gw.requirement(CHAT, BROKEN_CHAT_BODY), BASE_CHAIN_ID);
    const before = await gw.balances(payer.address);
    const responses = await Promise.all(Array.from({ length: 20 }, () => gw.pay(CHAT, BROKEN_CHAT_BODY, proof)));
    let failures = 0;
    for (const response of responses) {
      const body = (await response.json()) as { code?: string; error?: string };
      // a failure, "someone else is using this proof right now", or (past the bound on failed attempts,
      // default 3) "this proof is used up"; a failure releases it, so a later request may run the
      // generation again, at most the bound's times: what must never happen is a charge
      if (response.status === 409) assert.equal(body.code, 'payment_in_progress');
      else if (response.status === 402) assert.match(body.error ?? '', /^payment_attempts_exhausted/);
      else {
        assert.ok([502, 503, 504].includes(response.status), `status ${response.status}`);
        failures += 1;
      }
    }
    assert.ok(failures >= 1 && failures <= 3, `${failures} failed runs`);
    assert.deepEqual(await gw.balances(payer.address), before);
    assert.equal((await gw.row(proof))?.state, 'released');
  });
});

describe('a settlement that does not land is never charged, and its result is withheld', () => {
  let service: RunningService;
  const gw = gatewayHelpers(() => service);
  before(async () => {
    // short settlement timeout: the dropped-settlement test waits for it once, and nothing else here runs with
    // automine off; short lease: a payment checked once ('unknown') can be checked again soon; the timer is
    // out of the way so runOnce() below is the only reconciler
    service = await startGateway({ settlementTimeoutMs: 1_500, reconcileLeaseMs: 200, reconcileIntervalMs: 3_600_000 });
  });
  after(() => service.stop());

  async function pendingTransactions(): Promise<number> {
    return Number(((await gw.rpc('txpool_status')) as { pending: string }).pending);
  }

  for (const wire of [1, 2] as const) {
    test(`the payer front-runs the settlement with the same nonce: 402 settlement_failed, nothing to payTo (x402 v${wire})`, async () => {
      const payer = await fundedEvmBuyer(service, ['base']);
      const requirement = await gw.requirement(IMAGES, IMAGE_BODY);
      const price = BigInt(requirement.maxAmountRequired);
      const nonce = `0x${(wire === 1 ? 'f1' : 'f2').repeat(32)}` as const;
      const proof = await signEvmProof(payer, requirement, BASE_CHAIN_ID, { nonce });
      const [payerBefore, payToBefore] = await gw.balances(payer.address);
      const mediaBefore = gw.mediaFiles();
      const mining = gw.chain().mining!;

      await mining.setAutomine(false);
      let response: Response;
      try {
        const inFlight = wire === 1 ? gw.pay(IMAGES, IMAGE_BODY, proof) : gw.payV2(IMAGES, IMAGE_BODY, proof, requirement);
        for (let i = 0; i < 200 && (await pendingTransactions()) === 0; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(await pendingTransactions(), 1, 'the settlement was broadcast');
        // same nonce, another recipient, a higher tip: ordered first in the block, so ours reverts
        const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
        await spendDirectly(gw.chain(), payer, await signEvmProof(payer, requirement, BASE_CHAIN_ID, { nonce, to: elsewhere }), parseGwei('50'));
        await mining.mine();
        response = await inFlight;
      } finally {
        await mining.setAutomine(true);
      }

      assert.equal(response.status, 402);
      assert.match(((await response.json()) as { error: string }).error, /^settlement_failed: /);
      // the receipt comes on the proof's own wire, with the reason in both fields
      const receipt = decodeReceipt(response.headers.get(wire === 1 ? 'x-payment-response' : 'payment-response')) as Record<string, unknown>;
      assert.equal(response.headers.get(wire === 1 ? 'payment-response' : 'x-payment-response'), null);
      assert.equal(receipt.success, false);
      assert.equal(receipt.network, wire === 1 ? 'base' : 'eip155:8453');
      assert.match(String(receipt.transaction), /^0x[0-9a-f]{64}$/);
      assert.equal(typeof receipt.errorReason, 'string');
      assert.match(String(receipt.errorMessage), /could not be settled/);
      const row = await gw.row(proof);
      assert.equal(row?.state, 'failed');
      assert.equal(row?.result, null, 'the result is withheld');
      assert.equal(gw.mediaFiles(), mediaBefore, 'its media deleted');
      const [payerAfter, payToAfter] = await gw.balances(payer.address);
      assert.equal(payToAfter, payToBefore, 'payTo received nothing');
      assert.equal(payerAfter, payerBefore - price, "only the payer's own transfer moved funds");

      const replay = await gw.pay(IMAGES, IMAGE_BODY, proof);
      assert.equal(replay.status, 402);
      assert.equal(((await replay.json()) as { error: string }).error, 'nonce_already_used');
    });
  }

  test('a settlement dropped from the mempool stays pending until validBefore passes, then fails: no charge', async () => {
    const payer = await fundedEvmBuyer(service, ['base']);
    const requirement = await gw.requirement(IMAGES, IMAGE_BODY);
    const proof = await signEvmProof(payer, requirement, BASE_CHAIN_ID);
    const before = await gw.balances(payer.address);
    const mediaBefore = gw.mediaFiles();
    const mining = gw.chain().mining!;

    await mining.setAutomine(false);
    try {
      const pending = await gw.pay(IMAGES, IMAGE_BODY, proof);
      assert.equal(pending.status, 409);
      const { code, transaction } = (await pending.json()) as { code: string; transaction: string };
      assert.equal(code, 'settlement_pending');
      assert.equal((await gw.row(proof))?.txHash, transaction);

      await gw.rpc('anvil_dropTransaction', [transaction]);
      assert.equal(await pendingTransactions(), 0);
      await mining.mine();
      await service.reconciler.runOnce();
      // no receipt, nonce unused, but validBefore still ahead: it could still land, so it stays pending
      assert.equal((await gw.row(proof))?.state, 'pending');
      assert.equal((await gw.pay(IMAGES, IMAGE_BODY, proof)).status, 409);

      // once the chain's clock is past validBefore, no block can include it any more
      await gw.rpc('evm_increaseTime', [requirement.maxTimeoutSeconds + 60]);
      await mining.mine();
    } finally {
      await mining.setAutomine(true);
    }
    await new Promise((r) => setTimeout(r, 250)); // the earlier check's lease runs out
    await service.reconciler.runOnce();
    const row = await gw.row(proof);
    assert.equal(row?.state, 'failed');
    assert.equal(row?.result, null, 'the result is withheld');
    assert.equal(gw.mediaFiles(), mediaBefore, 'its media deleted');
    assert.deepEqual(await gw.balances(payer.address), before, 'no funds moved');

    const replay = await gw.pay(IMAGES, IMAGE_BODY, proof);
    assert.equal(replay.status, 402, 'the expired proof cannot buy the withheld result');
    assert.equal(((await replay.json()) as { error: string }).error, 'invalid_exact_evm_payload_authorization_valid_before');
  });
});

describe('a gateway killed mid-generation', () => {
  const BODY = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32 };
  // The chain and the upstream live in the test process, so they outlive the gateway.
  let chain: EvmSandbox;
  let upstream: OpenAIUpstream;
  let dataDir: string;
  before(async () => {
    [chain, upstream] = await Promise.all([startEvmSandbox(NETWORKS.base as EvmNetwork), startOpenAIUpstream()]);
    dataDir = mkdtempSync(join(tmpdir(), 'x402-gate-crash-'));
  });
  after(async () => {
    await Promise.all([chain.stop(), upstream.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  function startChild(): Promise<ChildService> {
    const config = {
      logLevel: 'silent',
      // a reservation older than this that never reached settlement belongs to a request that died
      abandonedAfterMs: 500,
      reconcileIntervalMs: 200,
      networks: {
        base: { payTo: chain.payTo, asset: chain.asset, facilitator: { type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'BASE_SETTLEMENT_KEY' } },
      },
      providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL, maxRetries: 0, timeoutMs: 10_000 } },
      models: [
        ...embeddedModels(),
        { id: 'up/chat', provider: 'mock', upstreamModel: 'mock-chat-1', capability: 'chat', maxTokens: 256, defaultMaxTokens: 64, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' } },
      ],
    };
    return startChildService(config, { BASE_SETTLEMENT_KEY: chain.settlementPrivateKey }, { dataDir });
  }

  test('SIGKILL while the generation runs: nothing charged; after restart the same proof pays once and delivers', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(buyer.address, 5_000_000n);
    const payToBefore = await chain.balanceOf(chain.payTo);
    const first = await startChild();
    let second: ChildService | undefined;
    try {
      const quote = await postJson(`${first.url}${CHAT}`, BODY, { 'X-Network': 'base' });
      const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      const price = BigInt(requirement.maxAmountRequired);
      const proof = await signEvmProof(buyer, requirement, BASE_CHAIN_ID);

      // the upstream holds the first generation long enough to kill the gateway in the middle of it
      upstream.fail(CHAT_PATH, { kind: 'delay', ms: 3_000 });
      const inFlight = postJson(`${first.url}${CHAT}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof }).catch(() => undefined);
      for (let i = 0; i < 200 && upstream.received(CHAT_PATH).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(upstream.received(CHAT_PATH).length, 1, 'the generation started');
      await first.kill();
      await inFlight;
      assert.equal(await chain.balanceOf(buyer.address), 5_000_000n, 'nothing charged');

      second = await startChild();
      // 409 payment_in_progress until the next start's reconciler frees the abandoned reservation
      let response: Response | undefined;
      for (let i = 0; i < 50; i++) {
        response = await postJson(`${second.url}${CHAT}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
        if (response.status !== 409) break;
        assert.equal(((await response.json()) as { code: string }).code, 'payment_in_progress');
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(response!.status, 200);
      assert.ok(((await response!.json()) as { response: string }).response.length > 0);
      assert.equal(upstream.received(CHAT_PATH).length, 2, 'the generation ran again, once');
      assert.equal(await chain.balanceOf(buyer.address), 5_000_000n - price, 'charged once');
      assert.equal(await chain.balanceOf(chain.payTo), payToBefore + price);
    } finally {
      await first.kill();
      await second?.stop();
    }
  });
});
