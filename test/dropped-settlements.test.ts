// A settlement transaction that leaves the mempool without being mined, on the sandbox anvil for real
// (automine off, then anvil_dropTransaction, anvil_dropAllTransactions, or another transaction from the
// settlement key with the same nonce): the payment ends settled exactly once, the payer charged the price
// once and payTo credited once, whether the gateway is still waiting for the receipt or has already
// answered 409 settlement_pending and left it to the reconciler.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEventTopics, parseAbiItem, parseGwei, type Hex } from 'viem';
import { postJson, startTestService } from './support/service.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const IMAGES = '/api/v1/ai/images';
const IMAGE_BODY = { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' };
const BASE_CHAIN_ID = 8453;
const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

interface PoolTransaction {
  hash: Hex;
  from: Hex;
  nonce: Hex;
  maxFeePerGas: Hex;
  maxPriorityFeePerGas: Hex;
}

function helpers(service: () => RunningService) {
  const chain = () => service().sandbox!.chains.get('base')!;
  const rpc = async <T,>(method: string, params: unknown[] = []): Promise<T> => {
    const answer = (await (await postJson(chain().rpcUrl, { jsonrpc: '2.0', id: 1, method, params })).json()) as { result?: T; error?: { message: string } };
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result as T;
  };
  const pool = async (): Promise<PoolTransaction[]> => {
    const content = await rpc<{ pending: Record<string, Record<string, PoolTransaction>> }>('txpool_content');
    return Object.values(content.pending).flatMap((byNonce) => Object.values(byNonce));
  };
  return {
    service,
    chain,
    rpc,
    pool,
    /** Waits (a condition, never a fixed time) until the mempool holds `count` transactions other than `except`. */
    async poolHolds(count: number, except: Hex[] = []): Promise<PoolTransaction[]> {
      for (let attempt = 0; ; attempt++) {
        const held = (await pool()).filter((tx) => !except.includes(tx.hash));
        if (held.length === count) return held;
        if (attempt > 6_000) assert.fail(`the mempool holds ${held.length} transactions, not ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async requirement(): Promise<PaymentRequirements> {
      const response = await postJson(`${service().url}${IMAGES}`, IMAGE_BODY, { 'X-Network': 'base' });
      assert.equal(response.status, 402);
      return ((await response.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    },
    pay(proof: string): Promise<Response> {
      return postJson(`${service().url}${IMAGES}`, IMAGE_BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
    },
    async balances(payer: string): Promise<[bigint, bigint]> {
      const payTo = service().rails.get('base')!.payTo;
      return [await balanceOf(service(), 'base', payer), await balanceOf(service(), 'base', payTo)];
    },
    /** how many transactions consumed this payer's authorization nonce: exactly one for a payment settled once */
    async authorizationUses(payer: string, proof: string): Promise<number> {
      const nonce = (JSON.parse(Buffer.from(proof, 'base64').toString('utf8')) as { payload: { authorization: { nonce: Hex } } }).payload.authorization.nonce;
      const logs = await rpc<unknown[]>('eth_getLogs', [
        {
          address: chain().asset,
          fromBlock: '0x0',
          topics: encodeEventTopics({ abi: [AUTHORIZATION_USED], eventName: 'AuthorizationUsed', args: { authorizer: payer as Hex, nonce } }),
        },
      ]);
      return logs.length;
    },
  };
}

/** One paid image call on a fresh payer; the proof and the balances before it. */
async function newPayment(service: RunningService, gw: ReturnType<typeof helpers>) {
  const payer = await fundedEvmBuyer(service, ['base']);
  const requirement = await gw.requirement();
  const proof = await signEvmProof(payer, requirement, BASE_CHAIN_ID);
  return { payer, proof, price: BigInt(requirement.maxAmountRequired), before: await gw.balances(payer.address) };
}

/** Payments made one after another, none settled before the first's balances were read. */
async function assertSettledOnce(gw: ReturnType<typeof helpers>, payments: Awaited<ReturnType<typeof newPayment>>[]) {
  for (const payment of payments) {
    assert.equal(await balanceOf(gw.service(), 'base', payment.payer.address), payment.before[0] - payment.price, 'the payer paid the price once');
    assert.equal(await gw.authorizationUses(payment.payer.address, payment.proof), 1, 'one transfer consumed the authorization');
  }
  const total = payments.reduce((sum, payment) => sum + payment.price, 0n);
  assert.equal((await gw.balances(payments[0]!.payer.address))[1], payments[0]!.before[1] + total, 'payTo received each price once');
}

describe('while the gateway waits for the receipt', () => {
  let service: RunningService;
  const gw = helpers(() => service);
  before(async () => {
    // the receipt wait outlasts anything these tests do; no periodic reconciler to race with
    service = await startTestService({ config: { settlementTimeoutMs: 600_000, reconcileIntervalMs: 3_600_000 } });
  });
  after(() => service.stop());

  test('a dropped settlement is sent again, the same bytes, and the call ends 200 settled once', async () => {
    const payment = await newPayment(service, gw);
    const mining = gw.chain().mining!;
    await mining.setAutomine(false);
    let response: Response;
    try {
      const inFlight = gw.pay(payment.proof);
      const [sent] = await gw.poolHolds(1);
      await gw.rpc('anvil_dropTransaction', [sent!.hash]);
      const [again] = await gw.poolHolds(1); // the gateway saw it gone and sent it again
      assert.equal(again!.hash, sent!.hash, 'the very same transaction, not a second payment');
      await mining.mine();
      response = await inFlight;
    } finally {
      await mining.setAutomine(true);
    }
    assert.equal(response.status, 200);
    assert.equal(decodeReceipt(response.headers.get('x-payment-response')).success, true);
    await assertSettledOnce(gw, [payment]);
  });

  test('a settlement replaced by another transaction with its nonce is sent again under a new one, and settles once', async () => {
    const payment = await newPayment(service, gw);
    const mining = gw.chain().mining!;
    await mining.setAutomine(false);
    let response: Response;
    let replaced: PoolTransaction;
    try {
      const inFlight = gw.pay(payment.proof);
      [replaced] = (await gw.poolHolds(1)) as [PoolTransaction];
      // the settlement key itself (impersonated: the sandbox keeps its secret) spends the nonce on a higher-fee
      // transfer to itself, which takes the settlement's place in the mempool
      await gw.rpc('anvil_impersonateAccount', [replaced.from]);
      await gw.rpc('eth_sendTransaction', [
        {
          from: replaced.from,
          to: replaced.from,
          value: '0x0',
          nonce: replaced.nonce,
          gas: '0x5208',
          maxFeePerGas: `0x${(BigInt(replaced.maxFeePerGas) * 2n + parseGwei('1')).toString(16)}`,
          maxPriorityFeePerGas: `0x${(BigInt(replaced.maxPriorityFeePerGas) * 2n + parseGwei('1')).toString(16)}`,
        },
      ]);
      await gw.rpc('anvil_stopImpersonatingAccount', [replaced.from]);
      await mining.mine(); // the replacement is mined; the settlement can never be
      const [resent] = await gw.poolHolds(1);
      assert.notEqual(resent!.hash, replaced.hash);
      assert.equal(BigInt(resent!.nonce), BigInt(replaced.nonce) + 1n, 'sent again with the next nonce');
      await mining.mine();
      response = await inFlight;
    } finally {
      await mining.setAutomine(true);
    }
    assert.equal(response.status, 200);
    const receipt = decodeReceipt(response.headers.get('x-payment-response'));
    assert.equal(receipt.success, true);
    assert.notEqual(receipt.transaction, replaced.hash, 'the receipt names the transaction that was mined');
    await assertSettledOnce(gw, [payment]);
  });
});

describe('after the gateway answered 409 settlement_pending', () => {
  let service: RunningService;
  const gw = helpers(() => service);
  before(async () => {
    // a short receipt wait: with automine off the call answers 409 settlement_pending; the test runs the reconciler
    service = await startTestService({ config: { settlementTimeoutMs: 1_000, reconcileIntervalMs: 3_600_000, reconcileLeaseMs: 1_000 } });
  });
  after(() => service.stop());

  /** Runs reconciler passes until `done` (a pass leaves what it checked leased for reconcileLeaseMs). */
  async function reconcileUntil(done: () => Promise<boolean>, what: string): Promise<void> {
    for (let attempt = 0; !(await done()); attempt++) {
      if (attempt > 3_000) assert.fail(`the reconciler never got to: ${what}`);
      await service.reconciler.runOnce();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  test('every dropped settlement is sent again by the reconciler, the same bytes, and each settles once', async () => {
    const payments = [await newPayment(service, gw), await newPayment(service, gw), await newPayment(service, gw)];
    const mining = gw.chain().mining!;
    await mining.setAutomine(false);
    try {
      for (const payment of payments) {
        const pending = await gw.pay(payment.proof);
        assert.equal(pending.status, 409);
        assert.equal(((await pending.json()) as { code: string }).code, 'settlement_pending');
      }
      const sent = await gw.poolHolds(3);
      await gw.rpc('anvil_dropAllTransactions');
      await gw.poolHolds(0);
      // the first nonce's loss holds the other two back as well: all three must come back
      await reconcileUntil(async () => (await gw.pool()).length === 3, 'sending the three again');
      const again = await gw.pool();
      assert.deepEqual(again.map((tx) => tx.hash).sort(), sent.map((tx) => tx.hash).sort(), 'the same three transactions');
      await mining.mine();
    } finally {
      await mining.setAutomine(true);
    }
    for (const payment of payments) {
      // a replay gets the stored result once the reconciler has found the settlement
      let replay: Response | undefined;
      await reconcileUntil(async () => (replay = await gw.pay(payment.proof)).status !== 409, 'the settlement mined');
      assert.equal(replay!.status, 200);
    }
    await assertSettledOnce(gw, payments);
  });
});
