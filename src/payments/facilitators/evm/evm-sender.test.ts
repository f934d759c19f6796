// EvmSender's repair of a nonce gap, on a real anvil with automine off: a transaction sent from the key by
// someone who is gone (another instance that died, modelled by a second EvmSender sharing the nonce counter
// and never asked again) and then lost by the node leaves a gap that holds back every later transaction.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createTestClient, defineChain, http, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilNode } from '../../../sandbox/evm/anvil.ts';
import { EvmSender, type SendResult } from './evm-sender.ts';
import { ProcessNonces } from '../../../store/nonce-allocator.ts';
import { anvilRpc, pooledTransactions, type AnvilRpc } from '../../../../test/support/anvil-pool.ts';

const CHAIN_ID = 8453;
const chain = defineChain({ id: CHAIN_ID, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [] } } });
let anvil: AnvilNode;
let rpc: AnvilRpc;

before(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  rpc = anvilRpc(anvil.rpcUrl);
});
after(() => anvil.stop());
beforeEach(() => rpc('evm_setAutomine', [true]));

/** A funded key, two senders on it sharing one nonce counter (as instances share the ledger's), a recipient. */
async function setup(gapGraceMs: number) {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = createPublicClient({ transport: http(anvil.rpcUrl), chain, pollingInterval: 20 });
  await createTestClient({ mode: 'anvil', transport: http(anvil.rpcUrl) }).setBalance({ address: account.address, value: parseEther('1') });
  const counter = new ProcessNonces(() => client.getTransactionCount({ address: account.address, blockTag: 'pending' }));
  const sender = () => new EvmSender({ client, account, chainId: CHAIN_ID, nonces: () => counter, gapGraceMs });
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const pay = async (from: EvmSender, value: bigint) => {
    const sent: SendResult = await from.send({ to: recipient, value, gas: 21_000n });
    assert.equal(sent.status, 'broadcast');
    return sent as Extract<SendResult, { status: 'broadcast' }>;
  };
  const pool = () => pooledTransactions(rpc, account.address);
  const received = () => client.getBalance({ address: recipient });
  return { account, client, recipient, dead: sender(), live: sender(), pay, pool, received };
}

test('a gap nobody holds the bytes for is filled with a no-op at the second check, and the transaction behind it is mined', async () => {
  const { account, client, dead, live, pay, pool, received } = await setup(0);
  await rpc('evm_setAutomine', [false]);
  const lost = await pay(dead, 5n); // the instance that sent it dies now: nobody will send it again
  await rpc('anvil_dropTransaction', [lost.transaction]);
  const waiting = await pay(live, 7n);
  assert.equal(waiting.nonce, lost.nonce + 1, 'the counter had moved past the lost nonce');

  await live.rebroadcast();
  assert.equal((await pool()).has(lost.nonce), false, 'one check is not enough to call it a gap');
  await live.rebroadcast();
  const filler = (await pool()).get(lost.nonce);
  assert.ok(filler, 'the second check filled the gap');
  assert.notEqual(filler.hash, lost.transaction, 'not the lost transaction');
  assert.equal(filler.to.toLowerCase(), account.address.toLowerCase(), 'a transfer to the key itself');
  assert.equal(BigInt(filler.value), 0n, 'of nothing');

  await rpc('evm_mine');
  const watched = await live.watch(waiting, 60_000, 20);
  assert.equal(watched.status, 'mined');
  // the lost transaction turning up after all can no longer be mined
  await assert.rejects(client.sendRawTransaction({ serializedTransaction: lost.raw }), /nonce too low/i);
  assert.equal(await received(), 7n, 'only the transaction that was waiting moved value');
});

test('no filler while the node still holds a transaction at the next nonce, or before the gap has lasted the grace', async () => {
  const held = await setup(0);
  await rpc('evm_setAutomine', [false]);
  // another instance's transfer, still in the node's pool, at fees low enough that a filler would replace it
  const { baseFeePerGas } = await held.client.getBlock({ blockTag: 'latest' });
  const alive = await held.account.signTransaction({
    type: 'eip1559',
    chainId: CHAIN_ID,
    nonce: await held.client.getTransactionCount({ address: held.account.address, blockTag: 'pending' }),
    to: held.recipient,
    value: 5n,
    gas: 21_000n,
    maxFeePerGas: baseFeePerGas! + 1n,
    maxPriorityFeePerGas: 1n,
  });
  const aliveHash = await held.client.sendRawTransaction({ serializedTransaction: alive });
  const waiting = await held.pay(held.live, 7n);
  for (let check = 0; check < 3; check++) await held.live.rebroadcast();
  assert.equal((await held.pool()).get(waiting.nonce - 1)?.hash, aliveHash, 'the other instance keeps its nonce');
  await rpc('evm_mine');
  assert.equal(await held.received(), 12n, 'both transfers mined');

  const young = await setup(3_600_000);
  const lost = await young.pay(young.dead, 5n);
  await rpc('anvil_dropTransaction', [lost.transaction]);
  await young.pay(young.live, 7n);
  for (let check = 0; check < 3; check++) await young.live.rebroadcast();
  assert.equal((await young.pool()).has(lost.nonce), false, 'a gap younger than the grace is left alone');
});

test('a process restarted after the node lost its transaction starts at the lost nonce: no gap to fill', async () => {
  const { account, client, pay, received } = await setup(0);
  const processSender = () => new EvmSender({ client, account, chainId: CHAIN_ID }); // its own in-memory counter
  await rpc('evm_setAutomine', [false]);
  const lost = await pay(processSender(), 5n); // the process restarts: its memory is gone
  await rpc('anvil_dropTransaction', [lost.transaction]);
  const restarted = processSender();
  const first = await pay(restarted, 7n);
  assert.equal(first.nonce, lost.nonce, 'the chain counts only what it can mine next');
  await rpc('evm_mine');
  assert.equal((await restarted.watch(first, 60_000, 20)).status, 'mined');
  assert.equal(await received(), 7n);
});
