// Payment channels end to end: the official client pays 50 calls on one channel (one deposit transaction, none
// for the vouchers), and the claimer turns the charges into money: the vouchers of many channels claimed in one
// claimWithSignature, swept to payTo with one settle, the payee receiving exactly the sum of the receipts'
// chargedAmount; one instance claims a round; a crash between claim and settle loses nothing; a withdrawal a
// payer starts is claimed before it completes. Balances read on-chain to the atomic unit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { channelOf, ESCROW_ABI } from './support/channels.ts';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, createTestClient, createWalletClient, http, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import { ChannelClaimer } from '../src/payments/channels/channel-claimer.ts';
import { claimerRequirement } from '../src/payments/channels/channel-claimer.ts';
import { httpRoutes } from '../src/http/paid/operations.ts';

const CHAT = { path: '/api/v1/ai/chat', body: { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 32, options: { seed: 7 } } };
const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };
const SPEECH = { path: '/api/v1/ai/tts', body: { text: 'Hello world' } };
const OPENAI_CHAT = { path: '/v1/chat/completions', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 16 } };
const STREAMED_CHAT = { path: '/v1/chat/completions', body: { ...OPENAI_CHAT.body, stream: true } };

const ADMIN_TOKEN_ENV = 'X402_CHANNELS_TEST_ADMIN_TOKEN';
const ADMIN_TOKEN = 'channels-test-admin-token';

let service: RunningService;
before(async () => {
  // the claimer's own timer stays out of the way (rounds are run by the tests); its threshold is out of reach
  process.env[ADMIN_TOKEN_ENV] = ADMIN_TOKEN;
  service = await startTestService({
    networks: ['base'],
    config: { adminTokenEnv: ADMIN_TOKEN_ENV, channels: { claimIntervalMs: 800_000, claimThreshold: '1000000000000', claimMaxAgeMs: 60_000 } },
  });
});
after(async () => {
  await service.stop();
  delete process.env[ADMIN_TOKEN_ENV];
});


const rail = () => service.rails.get('base')!;
const rpcUrl = () => service.sandbox!.chains.get('base')!.rpcUrl;
const chain = () => createPublicClient({ transport: http(rpcUrl()) });

const configOf = (buyer: PrivateKeyAccount) => channelOf(rail(), buyer.address).config;
const channelIdOf = (buyer: PrivateKeyAccount) => channelOf(rail(), buyer.address).channelId;

async function onChain(buyer: PrivateKeyAccount): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'channels', args: [channelIdOf(buyer)] });
  return { balance, totalClaimed };
}

function payer(buyer: PrivateKeyAccount, deposit: bigint) {
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain()), { depositStrategy: () => deposit.toString() });
  const paying = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  return async (endpoint: { path: string; body: unknown }) => {
    const response = await paying(`${service.url}${endpoint.path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
      body: JSON.stringify(endpoint.body),
    });
    const text = await response.text();
    assert.equal(response.status, 200, `${endpoint.path}: ${text}`);
    return { receipt: response.headers.get('PAYMENT-RESPONSE'), text, response };
  };
}

/** The charge a call's receipt states: the header, or a stream's last event. */
function chargeOf(paid: { receipt: string | null; text: string }): { charged: bigint; transaction: string } {
  if (paid.receipt) {
    const receipt = decode(paid.receipt);
    return { charged: BigInt(receipt.extra.chargedAmount), transaction: receipt.transaction };
  }
  throw new Error('no receipt');
}

test('50 calls on one channel across chat, images and speech: one deposit, then vouchers alone; the claim and settle pay the payee their sum', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 50_000_000n);
  // the client caps a deposit at 5x its per-payment spend cap: 5 USDC here, far above 50 small calls
  const pay = payer(buyer, 5_000_000n);
  const payTo = rail().payTo;
  const payToBefore = await balanceOf(service, 'base', payTo);
  const endpoints = [IMAGE, CHAT, SPEECH, OPENAI_CHAT];

  const first = chargeOf(await pay(IMAGE));
  assert.match(first.transaction, /^0x[0-9a-f]{64}$/, 'the first call deposits');
  const afterDeposit = await chain().getBlockNumber();
  let sum = first.charged;
  for (let i = 1; i < 50; i++) {
    const paid = chargeOf(await pay(endpoints[i % endpoints.length]!));
    assert.equal(paid.transaction, '', `call ${i + 1} sent no transaction`);
    sum += paid.charged;
  }
  assert.equal(await chain().getBlockNumber(), afterDeposit, 'no transaction after the deposit');
  const record = await service.ledger.channels!.get(channelIdOf(buyer));
  assert.equal(record?.chargedCumulative, sum, 'the ledger charged the sum of the receipts');
  assert.deepEqual(await onChain(buyer), { balance: 5_000_000n, totalClaimed: 0n });

  const [report] = await service.claimer!.round({ force: true });
  assert.equal(report!.claimTransactions.length, 1);
  assert.deepEqual(await onChain(buyer), { balance: 5_000_000n, totalClaimed: sum });
  assert.ok(report!.settleTransaction, 'claimed funds are swept to payTo');
  assert.equal(await balanceOf(service, 'base', payTo), payToBefore + sum, 'the payee received exactly what the receipts charged');

  // a second round has nothing to do
  const [again] = await service.claimer!.round({ force: true });
  assert.deepEqual([again!.claimTransactions, again!.settleTransaction], [[], undefined]);
});

test('one claimWithSignature claims the vouchers of several channels; below the threshold nothing is claimed', async () => {
  const buyers = await Promise.all([1, 2, 3].map(() => fundedEvmBuyer(service, ['base'], 10_000_000n)));
  const charged: bigint[] = [];
  for (const buyer of buyers) {
    const pay = payer(buyer, 2_000_000n);
    charged.push(chargeOf(await pay(IMAGE)).charged + chargeOf(await pay(SPEECH)).charged);
  }
  const [waiting] = await service.claimer!.round();
  assert.deepEqual(waiting!.claimTransactions, [], 'under the threshold, with nothing due, the round waits');

  const payToBefore = await balanceOf(service, 'base', rail().payTo);
  const [report] = await service.claimer!.round({ force: true });
  assert.equal(report!.claimTransactions.length, 1, 'one transaction for all three channels');
  for (const [i, buyer] of buyers.entries()) assert.equal((await onChain(buyer)).totalClaimed, charged[i]);
  const receipt = await chain().getTransactionReceipt({ hash: report!.claimTransactions[0] as Hex });
  assert.equal(receipt.status, 'success');
  assert.equal(await balanceOf(service, 'base', rail().payTo), payToBefore + charged.reduce((a, b) => a + b, 0n));
});

test('a crash between claim and settle loses nothing: the next round settles what the escrow holds as claimed', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const pay = payer(buyer, 2_000_000n);
  const charged = chargeOf(await pay(IMAGE)).charged;
  const record = (await service.ledger.channels!.get(channelIdOf(buyer)))!;
  // the claim went out (as a round does) and the instance died before recording it or settling
  const claimed = await rail().channels!.facilitator.settle(
    {
      payload: {
        type: 'claim',
        claims: [{ voucher: { channel: record.config, maxClaimableAmount: record.signedMaxClaimable.toString() }, signature: record.signature, totalClaimed: charged.toString() }],
      },
    },
    claimerRequirement(rail()),
  );
  assert.equal(claimed.success, true);
  assert.equal((await service.ledger.channels!.get(channelIdOf(buyer)))!.totalClaimed, 0n, 'the ledger never heard of it');

  const payToBefore = await balanceOf(service, 'base', rail().payTo);
  const [report] = await service.claimer!.round({ force: true });
  assert.deepEqual(report!.claimTransactions, [], 'the escrow says it is claimed: no second claim');
  assert.equal(report!.settledAmount, charged);
  assert.equal(await balanceOf(service, 'base', rail().payTo), payToBefore + charged);
  assert.equal((await service.ledger.channels!.get(channelIdOf(buyer)))!.totalClaimed, charged, 'the mirror caught up');
});

test('a withdrawal started by the payer is claimed at the next round, whatever the threshold', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const pay = payer(buyer, 2_000_000n);
  const charged = chargeOf(await pay(IMAGE)).charged + chargeOf(await pay(SPEECH)).charged;
  // the payer walks away: it asks for everything not claimed yet
  const wallet = createWalletClient({ account: buyer, transport: http(rpcUrl()) });
  const hash = await wallet.writeContract({ chain: null, address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'initiateWithdraw', args: [configOf(buyer), 2_000_000n] });
  assert.equal((await chain().waitForTransactionReceipt({ hash })).status, 'success');

  const [report] = await service.claimer!.round();
  assert.equal(report!.claimTransactions.length, 1, 'claimed without being forced');
  assert.equal((await onChain(buyer)).totalClaimed, charged);
});

test('one instance claims a round: a second claimer on the same ledger stands aside while the first holds it', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const pay = payer(buyer, 2_000_000n);
  const charged = chargeOf(await pay(IMAGE)).charged;
  const other = new ChannelClaimer({ rails: service.rails, store: service.ledger.channels!, log: service.log });
  const [a, b] = await Promise.all([service.claimer!.round({ force: true }), other.round({ force: true })]);
  const claims = [...a![0]!.claimTransactions, ...b![0]!.claimTransactions];
  assert.equal(claims.length, 1, 'exactly one claim transaction');
  assert.ok([a![0]!.skipped, b![0]!.skipped].some((why) => why?.includes('another instance')));
  assert.equal((await onChain(buyer)).totalClaimed, charged);
});

test('streamed chat is paid by a voucher; the client catches up on its charge through the corrective 402', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const pay = payer(buyer, 2_000_000n);
  await pay(IMAGE);
  const streamed = await pay(STREAMED_CHAT);
  assert.match(streamed.response.headers.get('content-type') ?? '', /text\/event-stream/);
  assert.match(streamed.text, /\[DONE\]|chat\.completion\.chunk/);
  const block = await chain().getBlockNumber();
  // the stream's charge was known only at its end: the next call resynchronises and pays by voucher
  const next = chargeOf(await pay(SPEECH));
  assert.equal(next.transaction, '');
  assert.equal(await chain().getBlockNumber(), block);
});

/** The official client's refund(url): its fetch names the network, as a paying fetch would. */
function refunder(buyer: PrivateKeyAccount, deposit: bigint) {
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain()), { depositStrategy: () => deposit.toString() });
  const paying = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  const withNetwork: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-Network': 'base' } });
  return {
    scheme,
    pay: (endpoint: { path: string; body: unknown }) =>
      paying(`${service.url}${endpoint.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(endpoint.body) }),
    refund: (path: string, amount?: string) => scheme.refund(`${service.url}${path}`, { fetch: withNetwork, ...(amount ? { amount } : {}) }),
  };
}

test('the official client refunds through a paid URL (GET): a partial refund, then (after a charge) the rest; the route never runs', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const client = refunder(buyer, 2_000_000n);
  let charged = 0n;
  for (const endpoint of [IMAGE, SPEECH]) {
    const response = await client.pay(endpoint);
    assert.equal(response.status, 200);
    charged += BigInt(decode(response.headers.get('PAYMENT-RESPONSE')).extra.chargedAmount);
  }
  const walletBefore = await balanceOf(service, 'base', buyer.address);

  const partial = await client.refund(IMAGE.path, '500000');
  assert.equal(partial.success, true);
  assert.equal(partial.amount, '500000');
  assert.equal(await balanceOf(service, 'base', buyer.address), walletBefore + 500_000n);
  // the refund claimed what was charged in the same transaction
  assert.deepEqual(await onChain(buyer), { balance: 1_500_000n, totalClaimed: charged });

  // a voucher asks for one refund: the same voucher again (the client's, as nothing was charged since) is refused
  await assert.rejects(client.refund(IMAGE.path), /refund_payload/);
  const paid = await client.pay(SPEECH);
  assert.equal(paid.status, 200);
  charged += BigInt(decode(paid.headers.get('PAYMENT-RESPONSE')).extra.chargedAmount);

  const full = await client.refund('/v1/chat/completions');
  assert.equal(full.success, true);
  assert.equal(BigInt(full.amount!), 1_500_000n - charged);
  assert.equal(await balanceOf(service, 'base', buyer.address), walletBefore + 2_000_000n - charged, 'the payer has back all it was not charged');
  assert.deepEqual(await onChain(buyer), { balance: charged, totalClaimed: charged });

  // the claimed charges reach the payee with the next round's settle
  const payToBefore = await balanceOf(service, 'base', rail().payTo);
  const [report] = await service.claimer!.round();
  assert.equal(report!.settledAmount, charged);
  assert.equal(await balanceOf(service, 'base', rail().payTo), payToBefore + charged);

  // nothing left: a further refund is refused, and no money moves
  await assert.rejects(client.refund(IMAGE.path), /no remaining balance|refund_no_balance/);
});

test('every paid route takes a channel refund: the spec routes, /v1, and /v1/messages alike', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const client = refunder(buyer, 2_000_000n);
  assert.equal((await client.pay(IMAGE)).status, 200);
  const paths = httpRoutes().map(({ route }) => route.path);
  assert.ok(paths.includes('/v1/messages'));
  const walletBefore = await balanceOf(service, 'base', buyer.address);
  for (const path of paths) {
    const refund = await client.refund(path, '1000');
    assert.equal(refund.success, true, path);
    assert.equal(refund.amount, '1000', path);
    // a voucher asks for one refund: the next one is signed after a charge
    assert.equal((await client.pay(SPEECH)).status, 200);
  }
  assert.equal(await balanceOf(service, 'base', buyer.address), walletBefore + 1000n * BigInt(paths.length));
});

test('a GET to a paid URL takes nothing but a refund: a voucher sent there is refused and charges nothing', async () => {
  const probe = await fetch(`${service.url}${IMAGE.path}`, { headers: { 'X-Network': 'base' } });
  assert.equal(probe.status, 402);
  const offer = decode(probe.headers.get('PAYMENT-REQUIRED'));
  assert.ok(offer.accepts.some((a: { scheme: string }) => a.scheme === 'batch-settlement'));
  // a voucher (a paid call's payload) sent with GET is refused: it would pay for work a GET never runs
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const client = refunder(buyer, 2_000_000n);
  let voucher: string | undefined;
  const recording = wrapFetchWithPayment(async (input, init) => {
    const headers = typeof input === 'object' && 'headers' in input ? input.headers : new Headers(init?.headers);
    voucher ??= headers.get('PAYMENT-SIGNATURE') ?? undefined;
    return fetch(input, init);
  }, new x402Client().register('eip155:8453', client.scheme));
  await recording(`${service.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  assert.ok(voucher);
  const before = (await service.ledger.channels!.get(channelIdOf(buyer)))!.chargedCumulative;
  const refused = await fetch(`${service.url}${IMAGE.path}`, { headers: { 'X-Network': 'base', 'PAYMENT-SIGNATURE': voucher } });
  assert.equal(refused.status, 402);
  assert.match(decode(refused.headers.get('PAYMENT-REQUIRED')).error, /only a refund|invalid_amount/);
  assert.equal((await service.ledger.channels!.get(channelIdOf(buyer)))!.chargedCumulative, before);
});

test('a channel is shown by /api/v1/payments/:channelId, the admin listing and /metrics: deposited, charged, claimed, settled, refunded', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const client = refunder(buyer, 2_000_000n);
  let charged = 0n;
  for (const endpoint of [IMAGE, SPEECH, IMAGE]) {
    const response = await client.pay(endpoint);
    assert.equal(response.status, 200);
    charged += BigInt(decode(response.headers.get('PAYMENT-RESPONSE')).extra.chargedAmount);
  }
  await service.claimer!.round({ force: true });
  await client.refund(IMAGE.path, '100000');
  const channelId = channelIdOf(buyer);

  const shown = (await (await fetch(`${service.url}/api/v1/payments/${channelId}`)).json()) as Record<string, unknown>;
  assert.deepEqual(
    [shown.scheme, shown.payer, shown.deposited, shown.charged, shown.claimed, shown.settled, shown.refunded, shown.balance],
    ['batch-settlement', buyer.address, '2000000', charged.toString(), charged.toString(), charged.toString(), '100000', '1900000'],
  );
  assert.equal(shown.signature, undefined, 'the voucher signature is not shown');

  const listing = await fetch(`${service.url}/api/v1/admin/channels?payer=${buyer.address}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(listing.status, 200);
  const { channels } = (await listing.json()) as { channels: { channelId: string; charged: string }[] };
  assert.deepEqual(channels.map((c) => [c.channelId, c.charged]), [[channelId, charged.toString()]]);
  assert.equal((await fetch(`${service.url}/api/v1/admin/channels`)).status, 401, 'behind the admin token');

  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  for (const event of ['deposited', 'charged', 'claimed', 'settled', 'refunded']) {
    assert.match(metrics, new RegExp(`x402_channel_amount_atomic_total\\{network="base",event="${event}"\\} [1-9]`), event);
  }
  assert.match(metrics, /x402_channel_calls_total\{network="base",model="[^"]+"\} [1-9]/);
});

test('/readyz probes the escrow: its code gone is degraded (channels:base), not a 503, since exact still pays', async () => {
  const report = async () => {
    const response = await fetch(`${service.url}/readyz`);
    return { status: response.status, body: (await response.json()) as { status: string; channels: Record<string, { status: string; error?: string }>; degraded: string[] } };
  };
  const ready = await report();
  assert.equal(ready.status, 200, JSON.stringify(ready.body));
  assert.equal(ready.body.channels.base!.status, 'ok');
  assert.deepEqual(ready.body.degraded, []);

  const anvil = createTestClient({ transport: http(rpcUrl()), mode: 'anvil' });
  const code = (await chain().getCode({ address: BATCH_SETTLEMENT_CONTRACT })) as Hex;
  await anvil.setCode({ address: BATCH_SETTLEMENT_CONTRACT, bytecode: '0x' });
  try {
    const degraded = await report();
    assert.equal(degraded.status, 200, JSON.stringify(degraded.body));
    assert.equal(degraded.body.channels.base!.status, 'down');
    assert.match(degraded.body.channels.base!.error!, /batch-settlement escrow/);
    assert.deepEqual(degraded.body.degraded, ['channels:base']);
  } finally {
    await anvil.setCode({ address: BATCH_SETTLEMENT_CONTRACT, bytecode: code });
  }
});

test("a lost server record starts from the escrow's totalClaimed: the client is resynchronised and pays on", async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const pay = payer(buyer, 2_000_000n);
  let charged = chargeOf(await pay(IMAGE)).charged + chargeOf(await pay(SPEECH)).charged;
  await service.claimer!.round({ force: true });
  assert.equal((await onChain(buyer)).totalClaimed, charged);
  // one more charge, not claimed, then the server loses the channel
  const unclaimed = chargeOf(await pay(IMAGE)).charged;
  await service.ledger.channels!.delete(channelIdOf(buyer));

  // the client's next voucher (charged + unclaimed + price) is above what the escrow says: the corrective 402
  // (no voucher state to offer) sends it back to the escrow's totalClaimed, and it pays from there
  const block = await chain().getBlockNumber();
  const next = chargeOf(await pay(SPEECH));
  assert.equal(next.transaction, '', 'no new deposit');
  assert.equal(await chain().getBlockNumber(), block);
  const record = (await service.ledger.channels!.get(channelIdOf(buyer)))!;
  assert.equal(record.chargedCumulative, charged + next.charged, 'the unclaimed charge of the lost record is forfeited');
  charged += next.charged;
  assert.ok(unclaimed > 0n);
});

test('the admin revenue report counts the calls paid on channels, at their charge, per model', async () => {
  const revenue = async () => {
    const response = await fetch(`${service.url}/api/v1/admin/revenue`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(response.status, 200);
    return (await response.json()) as { rows: { model: string; count: number; amount: string }[]; totals: { network: string; count: number; amount: string }[] };
  };
  const total = (report: Awaited<ReturnType<typeof revenue>>) => report.totals.find((t) => t.network === 'base') ?? { count: 0, amount: '0' };
  const before = total(await revenue());
  const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
  const pay = payer(buyer, 2_000_000n);
  let charged = 0n;
  for (const endpoint of [IMAGE, CHAT, SPEECH]) charged += chargeOf(await pay(endpoint)).charged;
  const after = total(await revenue());
  assert.equal(after.count - before.count, 3, 'three calls');
  assert.equal(BigInt(after.amount) - BigInt(before.amount), charged, 'what the receipts charged, the deposit not counted');
});
