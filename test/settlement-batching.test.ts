// The service with settlementBatching on, from outside: paid calls 8 in flight on the sandbox base chain
// (where Multicall3 is placed), every one 200 with a settlement receipt whose transaction carries its own
// transfer, and every balance exact. Whether calls shared a transaction depends on timing, so it is reported,
// not asserted; src/payments/facilitators/evm/local-evm.test.ts ("batching: …") forces a batch and proves its outcomes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, parseEventLogs, isAddressEqual, type Hex } from 'viem';
import { startTestService } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { payEvm, quoteFor } from './support/paid-call.ts';
import { DEMO_CHAT_MODEL } from '../src/config/engines.ts';
import { authorizationUsedEvent } from '../src/payments/facilitators/evm/evm-settlement-batcher.ts';
import { MULTICALL3_ADDRESS } from '../src/payments/facilitators/evm/multicall3-abi.ts';
import type { RunningService } from '../src/service.ts';

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'], config: { settlementBatching: true } });
});
after(() => service.stop());

test('with settlement batching on, 24 paid calls 8 in flight are each served once, charged once, exactly', async (t) => {
  const chatUrl = `${service.url}/api/v1/ai/chat`;
  const body = { model: DEMO_CHAT_MODEL.id, prompt: 'Hello', max_tokens: 4 };
  const price = BigInt((await quoteFor(chatUrl, body)).maxAmountRequired);
  const chain = service.sandbox!.chains.get('base')!;
  const buyers = await Promise.all(Array.from({ length: 8 }, () => fundedEvmBuyer(service, ['base'])));
  const before = await Promise.all([...buyers.map((b) => b.address), chain.payTo].map((address) => balanceOf(service, 'base', address)));

  const paid = (await Promise.all(buyers.map(async (buyer) => [await payEvm(chatUrl, body, buyer), await payEvm(chatUrl, body, buyer), await payEvm(chatUrl, body, buyer)]))).flat();

  const after = await Promise.all([...buyers.map((b) => b.address), chain.payTo].map((address) => balanceOf(service, 'base', address)));
  assert.deepEqual(after.slice(0, 8), before.slice(0, 8).map((balance) => balance - 3n * price), 'each buyer paid three prices');
  assert.equal(after[8]! - before[8]!, 24n * price, 'payTo received 24 prices');

  // each receipt's transaction carries that buyer's transfer (its own AuthorizationUsed event)
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  const byTransaction = new Map<string, number>();
  for (const call of paid) {
    const receipt = await client.getTransactionReceipt({ hash: call.transaction as Hex });
    assert.equal(receipt.status, 'success');
    const used = parseEventLogs({ abi: [authorizationUsedEvent], logs: receipt.logs }).filter((event) => isAddressEqual(event.address, chain.asset as Hex));
    assert.ok(used.some((event) => isAddressEqual(event.args.authorizer, call.payer as Hex)), `${call.transaction} carries ${call.payer}'s transfer`);
    byTransaction.set(call.transaction, (byTransaction.get(call.transaction) ?? 0) + 1);
    if (receipt.to && !isAddressEqual(receipt.to, MULTICALL3_ADDRESS)) assert.equal(byTransaction.get(call.transaction), 1, 'a transaction to the token carries one call');
  }
  t.diagnostic(`24 calls settled in ${byTransaction.size} transactions`);
});
