// The Solana settle path through the real gateway, on a Solana RPC it does not own (the sandbox chain started
// here, configured as an operator would: a local facilitator with its fee-payer key from the environment) and a
// chat upstream the test holds: what happens when the payer's transaction can no longer land by the time the
// work is done. Paid by the official @x402/svm v1 client scheme; balances read from the chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSolanaRpc, generateKeyPairSigner, type Address } from '@solana/kit';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import { startTestService, postJson } from './support/service.ts';
import { decodeReceipt } from './support/sandbox-wallet.ts';
import { CHAT_PATH, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { startSvmSandbox, type SvmSandbox } from '../src/sandbox/svm/svm-sandbox.ts';
import { encodeHeader } from '../src/x402/encoding.ts';
import { NETWORKS, type SvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const CHAT = '/api/v1/ai/chat';
const BODY = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32 };

let sandbox: SvmSandbox;
let upstream: OpenAIUpstream;
let service: RunningService;

before(async () => {
  [sandbox, upstream] = await Promise.all([startSvmSandbox(NETWORKS.solana as SvmNetwork), startOpenAIUpstream()]);
  // secrets come from the process environment, as in production
  process.env.SVM_SETTLE_TEST_FEE_PAYER_KEY = JSON.stringify([...sandbox.feePayer.secretKey]);
  service = await startTestService({
    config: {
      sandbox: { enabled: false },
      networks: {
        solana: { payTo: sandbox.payTo, asset: sandbox.asset, facilitator: { type: 'local', rpcUrl: sandbox.rpcUrl, secretKeyEnv: 'SVM_SETTLE_TEST_FEE_PAYER_KEY' } },
      },
      providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL, maxRetries: 0, timeoutMs: 60_000 } },
      models: [
        ...embeddedModels(),
        { id: 'up/chat', provider: 'mock', upstreamModel: 'mock-chat-1', capability: 'chat', maxTokens: 256, defaultMaxTokens: 64, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' } },
      ],
    },
  });
});
after(async () => {
  delete process.env.SVM_SETTLE_TEST_FEE_PAYER_KEY;
  await service?.stop();
  await Promise.all([sandbox?.stop(), upstream?.close()]);
});

const lamportsOf = async (owner: Address) => (await createSolanaRpc(sandbox.rpcUrl).getBalance(owner).send()).value;

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), 'the condition was never met');
}

test('the blockhash expires while the work runs: 402 settlement_failed: blockhash_expired, nothing charged, no fee paid', async () => {
  const buyer = await generateKeyPairSigner();
  await sandbox.faucet(buyer.address, 1_000_000n);
  const quote = await postJson(`${service.url}${CHAT}`, BODY, { 'X-Network': 'solana' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const payment = await new ExactSvmSchemeV1(buyer, { rpcUrl: sandbox.rpcUrl }).createPaymentPayload(1, requirement as never);
  const buyerBefore = await sandbox.balanceOf(buyer.address);
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);
  const feePayerBefore = await lamportsOf(sandbox.feePayer.address);

  // The generation is held once it reached the upstream (the payment is verified by then); meanwhile the
  // chain moves past the payer's blockhash, as a slow model on a real cluster would let it.
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const answer = postJson(`${service.url}${CHAT}`, BODY, { 'X-Network': 'solana', 'X-PAYMENT': encodeHeader(payment) });
  try {
    await until(() => upstream.received(CHAT_PATH).length === 1);
    sandbox.advanceBlocks(151);
  } finally {
    upstream.release();
  }
  const response = await answer;

  assert.equal(response.status, 402);
  assert.equal(((await response.json()) as { error: string }).error, 'settlement_failed: blockhash_expired');
  const receipt = decodeReceipt(response.headers.get('x-payment-response')) as Record<string, unknown>;
  assert.equal(receipt.success, false);
  assert.equal(receipt.errorReason, 'blockhash_expired');
  assert.equal(receipt.payer, buyer.address);
  assert.equal(await sandbox.balanceOf(buyer.address), buyerBefore, 'the buyer paid nothing');
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore, 'payTo received nothing');
  assert.equal(await lamportsOf(sandbox.feePayer.address), feePayerBefore, 'our fee payer paid no fee: the transaction was refused unsent');
});

test('the payer spends the funds while the work runs: 402 settlement_failed, nothing charged, no fee paid', async () => {
  const buyer = await generateKeyPairSigner();
  await sandbox.faucet(buyer.address, 1_000_000n);
  const quote = await postJson(`${service.url}${CHAT}`, BODY, { 'X-Network': 'solana' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const payment = await new ExactSvmSchemeV1(buyer, { rpcUrl: sandbox.rpcUrl }).createPaymentPayload(1, requirement as never);
  const payToBefore = await sandbox.balanceOf(sandbox.payTo);
  const feePayerBefore = await lamportsOf(sandbox.feePayer.address);

  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const answer = postJson(`${service.url}${CHAT}`, BODY, { 'X-Network': 'solana', 'X-PAYMENT': encodeHeader(payment) });
  try {
    await until(() => upstream.received(CHAT_PATH).length === 2);
    // the same payer pays everything to someone else first (the official client again: a proof paid elsewhere)
    const elsewhere = await generateKeyPairSigner();
    await sandbox.faucet(elsewhere.address, 1n); // its token account
    const drain = await new ExactSvmSchemeV1(buyer, { rpcUrl: sandbox.rpcUrl }).createPaymentPayload(1, {
      ...requirement,
      payTo: elsewhere.address,
      maxAmountRequired: '1000000',
      extra: { feePayer: buyer.address },
    } as never);
    // the buyer as its own fee payer signs the whole transaction: it can be sent as it is
    await createSolanaRpc(sandbox.rpcUrl).sendTransaction((drain.payload as { transaction: string }).transaction as never, { encoding: 'base64' }).send();
    assert.equal(await sandbox.balanceOf(buyer.address), 0n);
  } finally {
    upstream.release();
  }
  const response = await answer;

  assert.equal(response.status, 402);
  assert.match(((await response.json()) as { error: string }).error, /^settlement_failed: /);
  assert.equal(await sandbox.balanceOf(sandbox.payTo), payToBefore, 'payTo received nothing');
  assert.equal(await lamportsOf(sandbox.feePayer.address), feePayerBefore, 'our fee payer paid no fee: the preflight refused it unsent');
});
