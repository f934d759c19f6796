// Payment channels under attack and under faults (issue 36, items 2 to 4), on a running gateway with the sandbox
// base chain, paid by the official @x402/evm batch-settlement client; the attacker signs its own payloads.
// - A payer that withdraws its channel cannot spend it: no voucher is verified from a mirror while a withdrawal
//   is pending, nor accepted past what the escrow still pays once the withdrawal completes.
// - A stranger who names a payer's channel learns nothing of it, and cannot force its refund; a refund is
//   submitted once per voucher, for the amount it asked, whoever replays it.
// - A call whose answer was lost (the client left) is charged once, and its result is kept for the same voucher.
// After each test, on-chain: the payer lost exactly what its 200s were charged, and the payee got exactly that.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, createTestClient, createWalletClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { postJson, startTestService } from './support/service.ts';
import { fundedEvmBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import { encodeHeader as encode } from '../src/x402/encoding.ts';
import { accountFor, channelOf, officialChannelPayer, ESCROW_ABI } from './support/channels.ts';
import { CHAT_PATH, startOpenAIUpstream, upstreamChatConfig, type OpenAIUpstream } from './support/openai-upstream.ts';
import { until } from './support/sse.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import type { RunningService } from '../src/service.ts';

const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };
const SPEECH = { path: '/api/v1/ai/tts', body: { text: 'Hello world' } };
const UP_CHAT = { path: '/api/v1/ai/chat', body: { model: 'up/chat', prompt: 'a slow answer' } };
const FUNDS = 10_000_000n;

let upstream: OpenAIUpstream;
let service: RunningService;
before(async () => {
  upstream = await startOpenAIUpstream();
  const up = upstreamChatConfig(upstream.baseURL, { price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } });
  service = await startTestService({
    networks: ['base'],
    config: {
      // rounds are run by the tests
      channels: { claimIntervalMs: 800_000, claimThreshold: '1000000000000', claimMaxAgeMs: 60_000 },
      providers: up.providers,
      models: [...embeddedModels(), ...up.models],
    },
  });
});
after(async () => {
  await service.stop();
  await upstream.close();
});

const rail = () => service.rails.get('base')!;
const rpcUrl = () => service.sandbox!.chains.get('base')!.rpcUrl;
const chain = () => createPublicClient({ transport: http(rpcUrl()) });

const channel = (payer: string) => channelOf(rail(), payer);
const settleUp = (buyer: PrivateKeyAccount, charges: bigint[]) =>
  accountFor({ rail: rail(), rpcUrl: rpcUrl(), store: service.ledger.channels!, claimer: service.claimer!, funds: FUNDS }, buyer.address, charges);

async function onChain(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'channels', args: [channelId] });
  return { balance, totalClaimed };
}

/** The official client paying for `buyer` on this gateway; every 200's charge is kept in `charges`. */
function officialPayer(buyer: PrivateKeyAccount, deposit: bigint, recording?: typeof fetch) {
  const payer = officialChannelPayer(buyer, rpcUrl(), deposit, recording);
  return {
    ...payer,
    pay: (endpoint: { path: string; body: unknown }, signal?: AbortSignal) => payer.pay(service.url, endpoint, signal),
    refund: (path: string, amount?: string) => payer.refund(`${service.url}${path}`, amount),
  };
}

/** The gateway's batch-settlement offer for a call, as a client accepts it. */
async function offerFor(endpoint: { path: string; body: unknown }) {
  const quote = await postJson(`${service.url}${endpoint.path}`, endpoint.body, { 'X-Network': 'base' });
  return decode(quote.headers.get('PAYMENT-REQUIRED')).accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
}

/** A payment header carrying `payload` for `accepted`. */
const signature = (accepted: unknown, payload: unknown) => encode({ x402Version: 2, accepted, payload });

const anvil = () => createTestClient({ transport: http(rpcUrl()), mode: 'anvil' });
async function send(buyer: PrivateKeyAccount, functionName: 'initiateWithdraw' | 'finalizeWithdraw', args: readonly unknown[]): Promise<void> {
  const wallet = createWalletClient({ account: buyer, transport: http(rpcUrl()) });
  const hash = await wallet.writeContract({ chain: null, address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName, args } as never);
  assert.equal((await chain().waitForTransactionReceipt({ hash })).status, 'success');
}

test("a stranger naming a payer's channel learns nothing of it and cannot force its refund", async () => {
  const victim = await fundedEvmBuyer(service, ['base'], FUNDS);
  const client = officialPayer(victim, 2_000_000n);
  for (const endpoint of [IMAGE, SPEECH]) assert.equal((await client.pay(endpoint)).status, 200);
  const { config, channelId } = channel(victim.address);
  const before = await onChain(channelId);

  // the channel config is public: the stranger signs "vouchers" of its own for it, at every amount
  const stranger = toClientEvmSigner(privateKeyToAccount(generatePrivateKey()));
  const accepted = await offerFor(IMAGE);
  for (const ceiling of [1n, client.charges[0]!, BigInt(accepted.amount) * 5n]) {
    const voucher = await signVoucher(stranger, channelId, ceiling.toString(), 'eip155:8453');
    const response = await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, { 'X-Network': 'base', 'PAYMENT-SIGNATURE': signature(accepted, { type: 'voucher', channelConfig: config, voucher }) });
    assert.equal(response.status, 402);
    const required = decode(response.headers.get('PAYMENT-REQUIRED'));
    assert.equal(required.error, 'invalid_batch_settlement_evm_voucher_signature');
    const offer = required.accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
    assert.deepEqual([offer.extra.channelState, offer.extra.voucherState], [undefined, undefined], 'nothing of the channel is told');
  }
  // a refund in the payer's name, signed by the stranger: refused, nothing sent
  const refundOffer = decode((await fetch(`${service.url}${IMAGE.path}`, { headers: { 'X-Network': 'base' } })).headers.get('PAYMENT-REQUIRED')).accepts.find(
    (a: { scheme: string }) => a.scheme === 'batch-settlement',
  );
  const charged = client.charges[0]! + client.charges[1]!;
  const forged = await signVoucher(stranger, channelId, charged.toString(), 'eip155:8453');
  const block = await chain().getBlockNumber();
  const refund = await fetch(`${service.url}${IMAGE.path}`, { headers: { 'X-Network': 'base', 'PAYMENT-SIGNATURE': signature(refundOffer, { type: 'refund', channelConfig: config, voucher: forged }) } });
  assert.equal(refund.status, 402);
  assert.equal(await chain().getBlockNumber(), block, 'no transaction');
  assert.deepEqual(await onChain(channelId), before, "the victim's channel as it was");
  // and the victim's own client pays on, undisturbed
  assert.equal((await client.pay(IMAGE)).status, 200);
  await settleUp(victim, client.charges);
});

test('a refund is submitted once per voucher: its replays get its answer and move nothing; the voucher cannot ask for more', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
  let refundHeader: string | undefined;
  const recording: typeof fetch = async (input, init) => {
    const headers = typeof input === 'object' && 'headers' in input ? input.headers : new Headers(init?.headers);
    const paid = headers.get('PAYMENT-SIGNATURE');
    if (paid && decode(paid).payload.type === 'refund') refundHeader = paid;
    return fetch(input, init);
  };
  const client = officialPayer(buyer, 2_000_000n, recording);
  for (const endpoint of [IMAGE, SPEECH]) assert.equal((await client.pay(endpoint)).status, 200);
  const { channelId } = channel(buyer.address);
  const refunded = await client.refund(IMAGE.path, '300000');
  assert.equal(refunded.amount, '300000');
  assert.ok(refundHeader);
  const after = await onChain(channelId);
  const block = await chain().getBlockNumber();

  // the same refund, replayed by anyone who saw it: the same answer, no transaction, no money moved
  for (let i = 0; i < 5; i++) {
    const replay = await fetch(`${service.url}${IMAGE.path}`, { headers: { 'X-Network': 'base', 'PAYMENT-SIGNATURE': refundHeader } });
    assert.equal(replay.status, 200);
    const receipt = decode(replay.headers.get('PAYMENT-RESPONSE'));
    assert.deepEqual([receipt.transaction, receipt.amount], [refunded.transaction, '300000']);
  }
  // the same voucher asking for everything, or another amount: refused
  const asked = decode(refundHeader);
  for (const payload of [{ ...asked.payload, amount: undefined }, { ...asked.payload, amount: '1500000' }]) {
    const more = await fetch(`${service.url}${IMAGE.path}`, { headers: { 'X-Network': 'base', 'PAYMENT-SIGNATURE': encode({ ...asked, payload }) } });
    assert.equal(more.status, 402);
    assert.match(decode(more.headers.get('PAYMENT-REQUIRED')).error, /refund_payload: this voucher was used for a refund already/);
  }
  assert.equal(await chain().getBlockNumber(), block, 'no transaction for any of them');
  assert.deepEqual(await onChain(channelId), after);
  await settleUp(buyer, client.charges);
});

test('a call whose answer was lost (the client left) is charged once: the same voucher gets the kept result', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], FUNDS);
  const client = officialPayer(buyer, 2_000_000n);
  assert.equal((await client.pay(IMAGE)).status, 200);
  const { channelId } = channel(buyer.address);

  // the model holds its answer; the client gives up and leaves; the gateway finishes and charges the call
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const generations = upstream.requests.filter((r) => r.path === CHAT_PATH).length;
  const leaving = new AbortController();
  const lost = client.pay(UP_CHAT, leaving.signal).catch((error: unknown) => error);
  await until('the model to be asked', () => upstream.requests.filter((r) => r.path === CHAT_PATH).length > generations);
  leaving.abort();
  assert.ok((await lost) instanceof Error, 'the client got no answer');
  const chargedBefore = (await service.ledger.channels!.get(channelId))!.chargedCumulative;
  upstream.release();
  const charge = await until('the call to be charged', async () => {
    const now = (await service.ledger.channels!.get(channelId))!.chargedCumulative;
    return now > chargedBefore ? now - chargedBefore : undefined;
  });

  // the client asks again, for the same request: its voucher is the same, and gets the kept result, once charged
  const again = await client.pay(UP_CHAT);
  assert.equal(again.status, 200, await again.clone().text());
  assert.equal(client.charges.at(-1), charge, 'the receipt states the charge made for the lost answer');
  assert.equal(((await again.json()) as { response: string }).response.length > 0, true);
  assert.equal(upstream.requests.filter((r) => r.path === CHAT_PATH).length, generations + 1, 'the model ran once');
  assert.equal((await service.ledger.channels!.get(channelId))!.chargedCumulative, chargedBefore + charge, 'charged once');
  assert.equal((await client.pay(SPEECH)).status, 200, 'and the client pays on');
  await settleUp(buyer, client.charges);
});

// last: it moves the chain's clock past the withdraw delay, after which no deposit signed by the wall clock is valid
test('a withdrawal under way: no voucher past what the escrow still pays once it completes, none at all once it has', async () => {
  const [walker, trimmer] = await Promise.all([fundedEvmBuyer(service, ['base'], FUNDS), fundedEvmBuyer(service, ['base'], FUNDS)]);
  const walking = officialPayer(walker, 2_000_000n);
  const trimming = officialPayer(trimmer, 2_000_000n);
  for (const endpoint of [IMAGE, SPEECH]) assert.equal((await walking.pay(endpoint)).status, 200);
  assert.equal((await trimming.pay(IMAGE)).status, 200);
  const price = trimming.charges[0]!;
  const walked = channel(walker.address);
  const trimmed = channel(trimmer.address);

  // one payer walks away with everything not claimed; the other asks back all but 2.5 calls' worth. The claimer's
  // next round claims what was charged (before the deadline) and mirrors the withdrawals
  await send(walker, 'initiateWithdraw', [walked.config, 2_000_000n]);
  await send(trimmer, 'initiateWithdraw', [trimmed.config, 2_000_000n - (5n * price) / 2n]);
  await service.claimer!.round();
  assert.equal((await onChain(walked.channelId)).totalClaimed, walking.charges[0]! + walking.charges[1]!, 'claimed before the deadline');

  // what stays backs a second call of the second payer, not a third (claimable only if claimed before the deadline)
  assert.equal((await trimming.pay(IMAGE)).status, 200);
  const third = await trimming.pay(IMAGE);
  assert.equal(third.status, 402);
  assert.match(decode(third.headers.get('PAYMENT-REQUIRED')).error, /cumulative_exceeds_balance: a withdrawal is pending/);

  // the delay passes on chain (not on the gateway's clock, by which its mirror of the escrow is still fresh)
  await anvil().increaseTime({ seconds: 901 });
  await anvil().mine({ blocks: 1 });
  await send(walker, 'finalizeWithdraw', [walked.config]);
  await send(trimmer, 'finalizeWithdraw', [trimmed.config]);
  assert.equal((await onChain(walked.channelId)).balance, walking.charges[0]! + walking.charges[1]!, 'only what was claimed is left');

  // the walker's next vouchers, signed as its client would: each is checked on chain and refused
  const accepted = await offerFor(IMAGE);
  const signer = toClientEvmSigner(walker, chain());
  let ceiling = walking.charges[0]! + walking.charges[1]!;
  for (let i = 0; i < 5; i++) {
    ceiling += BigInt(accepted.amount);
    const voucher = await signVoucher(signer, walked.channelId, ceiling.toString(), 'eip155:8453');
    const response = await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, {
      'X-Network': 'base',
      'PAYMENT-SIGNATURE': signature(accepted, { type: 'voucher', channelConfig: walked.config, voucher }),
    });
    assert.equal(response.status, 402, `voucher ${i + 1} after the withdrawal`);
  }
  await settleUp(walker, walking.charges);
  await settleUp(trimmer, trimming.charges);
});
