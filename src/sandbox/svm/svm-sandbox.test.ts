import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSolanaRpc, generateKeyPairSigner, type Address } from '@solana/kit';
import { fetchMint, findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { NETWORKS, type SvmNetwork } from '../../x402/networks.ts';
import { startSvmSandbox, SVM_FAUCET_LAMPORTS_FLOOR, type SvmSandbox } from './svm-sandbox.ts';

const devnet = NETWORKS['solana-devnet'] as SvmNetwork;
let sandbox: SvmSandbox;

before(async () => {
  sandbox = await startSvmSandbox(devnet);
});
after(() => sandbox.stop());

const newAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;

test('the test USDC mint lives at the real devnet USDC address, 6 decimals, SPL Token', async () => {
  assert.equal(sandbox.network, 'solana-devnet');
  assert.equal(sandbox.asset, '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
  assert.match(sandbox.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(sandbox.info(), {
    network: 'solana-devnet',
    rpcUrl: sandbox.rpcUrl,
    asset: sandbox.asset,
    payTo: sandbox.payTo,
    feePayer: sandbox.feePayer.address,
  });

  const rpc = createSolanaRpc(sandbox.rpcUrl);
  const mint = await fetchMint(rpc, sandbox.asset);
  assert.equal(mint.programAddress, TOKEN_PROGRAM_ADDRESS);
  assert.equal(mint.data.decimals, 6);
  assert.equal(mint.data.mintAuthority.__option, 'Some');
  assert.equal(await rpc.getGenesisHash().send(), 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG');
});

test('the operator token account exists from the start and the fee payer has SOL', async () => {
  const rpc = createSolanaRpc(sandbox.rpcUrl);
  const [payToAta] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: sandbox.payTo, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const balance = await rpc.getTokenAccountBalance(payToAta).send();
  assert.equal(balance.value.amount, '0');
  assert.equal(await sandbox.balanceOf(sandbox.payTo), 0n);
  assert.ok((await rpc.getBalance(sandbox.feePayer.address).send()).value >= 1_000_000_000n);
  assert.equal(sandbox.feePayer.secretKey.length, 64);
});

test('the faucet mints test USDC and tops up SOL; balances read back', async () => {
  const owner = await newAddress();
  assert.equal(await sandbox.balanceOf(owner), 0n);

  assert.deepEqual(await sandbox.faucet(owner), { balance: 100_000_000n, lamports: SVM_FAUCET_LAMPORTS_FLOOR });
  const second = await sandbox.faucet(owner, 2_500_000n);
  assert.equal(second.balance, 102_500_000n);
  assert.equal(await sandbox.balanceOf(owner), 102_500_000n);

  const rpc = createSolanaRpc(sandbox.rpcUrl);
  assert.equal((await rpc.getBalance(owner).send()).value, SVM_FAUCET_LAMPORTS_FLOOR);
});

test('identical faucet calls in one slot all land, concurrently too', async () => {
  const owners = await Promise.all(Array.from({ length: 4 }, newAddress));
  const results = await Promise.all([...owners, owners[0]!].map((owner) => sandbox.faucet(owner, 1_000_000n)));
  assert.deepEqual(
    results.map((r) => r.balance),
    [1_000_000n, 1_000_000n, 1_000_000n, 1_000_000n, 2_000_000n],
  );
});

test('the faucet refuses silly amounts and non-addresses', async () => {
  const owner = await newAddress();
  await assert.rejects(sandbox.faucet(owner, 0n), RangeError);
  await assert.rejects(sandbox.faucet(owner, 1_000_000_000_001n), RangeError);
  await assert.rejects(sandbox.faucet('0x0000000000000000000000000000000000000001'), RangeError);
});

test('blockhashes expire 150 blocks after they were handed out', async () => {
  const rpc = createSolanaRpc(sandbox.rpcUrl);
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const height = await rpc.getBlockHeight().send();
  assert.ok(latest.lastValidBlockHeight >= height + 149n);
  assert.equal((await rpc.isBlockhashValid(latest.blockhash).send()).value, true);

  sandbox.advanceBlocks(151);
  assert.equal((await rpc.isBlockhashValid(latest.blockhash).send()).value, false);
  const { value: fresh } = await rpc.getLatestBlockhash().send();
  assert.notEqual(fresh.blockhash, latest.blockhash);
  assert.ok((await rpc.getBlockHeight().send()) > latest.lastValidBlockHeight);
});
