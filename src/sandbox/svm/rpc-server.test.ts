// The sandbox's JSON-RPC answers, through @solana/kit's own RPC client, every method the official x402
// payers and our facilitator use, in the shapes a validator answers with.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Decoder,
  isSolanaError,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
  type TransactionMessageBytesBase64,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { NETWORKS, type SvmNetwork } from '../../x402/networks.ts';
import { startSvmSandbox, type SvmSandbox } from './svm-sandbox.ts';
import { MAX_BODY_BYTES } from './json-rpc-listener.ts';
import { request as httpRequest } from 'node:http';

let sandbox: SvmSandbox;
let rpc: Rpc<SolanaRpcApi>;
let payer: KeyPairSigner;

before(async () => {
  sandbox = await startSvmSandbox(NETWORKS.solana as SvmNetwork);
  rpc = createSolanaRpc(sandbox.rpcUrl);
  payer = await generateKeyPairSigner();
  await sandbox.faucet(payer.address, 5_000_000n);
});
after(() => sandbox.stop());

/** A USDC transfer to the operator, paid (fee and all) by the payer itself. */
async function transfer(amount = 1_000n) {
  const [source] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: payer.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: sandbox.payTo, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getSetComputeUnitLimitInstruction({ units: 20_000 }),
          getSetComputeUnitPriceInstruction({ microLamports: 1_000_000n }),
          getTransferCheckedInstruction({ source, mint: sandbox.asset, destination, authority: payer, amount, decimals: 6 }),
        ],
        m,
      ),
  );
}

test('node facts: health, version, genesis hash, slot, block height', async () => {
  assert.equal(await rpc.getHealth().send(), 'ok');
  assert.ok((await rpc.getVersion().send())['solana-core']);
  assert.equal(await rpc.getGenesisHash().send(), '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d');
  const slot = await rpc.getSlot().send();
  assert.equal(typeof slot, 'bigint');
  assert.ok((await rpc.getBlockHeight().send()) >= slot);
  assert.ok((await rpc.getMinimumBalanceForRentExemption(165n).send()) > 2_000_000n);
});

test('accounts: base64, base58, jsonParsed mint and token account, several at once, balances', async () => {
  const [ata] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: payer.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const raw = await rpc.getAccountInfo(sandbox.asset, { encoding: 'base64' }).send();
  assert.equal(raw.value?.owner, TOKEN_PROGRAM_ADDRESS);
  assert.equal(Buffer.from(raw.value!.data[0], 'base64').length, 82);
  const b58 = await rpc.getAccountInfo(sandbox.asset, { encoding: 'base58' }).send();
  assert.equal(b58.value?.data[1], 'base58');

  const mint = await rpc.getAccountInfo(sandbox.asset, { encoding: 'jsonParsed' }).send();
  const parsedMint = (mint.value?.data as { program: string; parsed: { type: string; info: Record<string, unknown> } });
  assert.equal(parsedMint.program, 'spl-token');
  assert.equal(parsedMint.parsed.type, 'mint');
  assert.equal(parsedMint.parsed.info.decimals, 6);
  assert.equal(parsedMint.parsed.info.freezeAuthority, null);
  assert.equal(parsedMint.parsed.info.supply, '5000000');
  const token = await rpc.getAccountInfo(ata, { encoding: 'jsonParsed' }).send();
  const info = (token.value?.data as { parsed: { info: Record<string, unknown> } }).parsed.info;
  assert.equal(info.owner, payer.address);
  assert.deepEqual(info.tokenAmount, { amount: '5000000', decimals: 6, uiAmount: 5, uiAmountString: '5' });

  const many = await rpc.getMultipleAccounts([sandbox.asset, ata, (await generateKeyPairSigner()).address], { encoding: 'base64' }).send();
  assert.equal(many.value.length, 3);
  assert.equal(many.value[2], null);

  assert.deepEqual((await rpc.getTokenAccountBalance(ata).send()).value, { amount: '5000000', decimals: 6, uiAmount: 5, uiAmountString: '5' });
  assert.equal((await rpc.getBalance(payer.address).send()).value, 1_000_000_000n);
});

test('fees: base fee per signature plus the priority fee', async () => {
  const compiled = compileTransaction(await transfer());
  const message = getBase64Decoder().decode(compiled.messageBytes) as TransactionMessageBytesBase64;
  // 1 signature x 5000 + 20_000 CU x 1_000_000 micro-lamports = 5000 + 20_000
  assert.equal((await rpc.getFeeForMessage(message).send()).value, 25_000n);
});

test('simulate (unsigned with replaceRecentBlockhash, signed with sigVerify), send, status', async () => {
  const message = await transfer(1_234n);
  const unsigned = getBase64EncodedWireTransaction(compileTransaction(message));
  const estimate = await rpc.simulateTransaction(unsigned, { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true }).send();
  assert.equal(estimate.value.err, null);
  assert.ok(estimate.value.unitsConsumed! > 0n);
  assert.ok(estimate.value.replacementBlockhash?.blockhash);

  await assert.rejects(rpc.simulateTransaction(unsigned, { encoding: 'base64', sigVerify: true }).send(), /signature verification/i);

  const signed = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
  const simulated = await rpc.simulateTransaction(signed, { encoding: 'base64', sigVerify: true }).send();
  assert.equal(simulated.value.err, null);
  assert.ok(simulated.value.logs!.some((line) => line.includes(TOKEN_PROGRAM_ADDRESS)), simulated.value.logs!.join('\n'));

  const before = await sandbox.balanceOf(sandbox.payTo);
  const signature = await rpc.sendTransaction(signed, { encoding: 'base64' }).send();
  const { value: statuses } = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(statuses[0]?.err, null);
  assert.ok(statuses[0]?.confirmationStatus === 'confirmed' || statuses[0]?.confirmationStatus === 'finalized');
  assert.equal((await sandbox.balanceOf(sandbox.payTo)) - before, 1_234n);

  // The same transaction again is refused by preflight, as a validator does.
  await assert.rejects(rpc.sendTransaction(signed, { encoding: 'base64' }).send(), (error: Error) => {
    assert.match(error.message, /simulation failed/i);
    return true;
  });
});

test('an expired blockhash: isBlockhashValid false, simulation and sending refuse it', async () => {
  const message = await transfer(1n);
  const { blockhash } = message.lifetimeConstraint;
  assert.equal((await rpc.isBlockhashValid(blockhash).send()).value, true);
  const signed = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));

  sandbox.advanceBlocks(151);
  assert.equal((await rpc.isBlockhashValid(blockhash).send()).value, false);
  assert.equal((await rpc.simulateTransaction(signed, { encoding: 'base64', sigVerify: true }).send()).value.err, 'BlockhashNotFound');
  await assert.rejects(rpc.sendTransaction(signed, { encoding: 'base64' }).send(), /simulation failed/i);
  const compiled = compileTransaction(message);
  assert.equal((await rpc.getFeeForMessage(getBase64Decoder().decode(compiled.messageBytes) as TransactionMessageBytesBase64).send()).value, null);
});

test('a partially signed payment (fee payer slot empty) simulates with sigVerify off', async () => {
  const feePayer = sandbox.feePayer.address;
  const message = pipe(await transfer(10n), (m) => setTransactionMessageFeePayer(feePayer, m));
  const partial = await partiallySignTransactionMessageWithSigners(message);
  const result = await rpc.simulateTransaction(getBase64EncodedWireTransaction(partial) as Base64EncodedWireTransaction, { encoding: 'base64', sigVerify: false }).send();
  assert.equal(result.value.err, null);
});

test('JSON-RPC errors and batches', async () => {
  const post = async (body: unknown) =>
    (await fetch(sandbox.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
  assert.deepEqual(await post({ jsonrpc: '2.0', id: 1, method: 'noSuchMethod' }), { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } });
  const batch = (await post([
    { jsonrpc: '2.0', id: 1, method: 'getHealth' },
    { jsonrpc: '2.0', id: 2, method: 'getAccountInfo', params: ['not-an-address'] },
  ])) as { id: number; result?: unknown; error?: { code: number } }[];
  assert.equal(batch[0]?.result, 'ok');
  assert.equal(batch[1]?.error?.code, -32602);
});

test('a body over the limit is refused with a 413, declared or not, and the endpoint answers on', async () => {
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth', params: ['x'.repeat(MAX_BODY_BYTES)] });
  const declared = await fetch(sandbox.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: huge });
  assert.equal(declared.status, 413);
  assert.equal(((await declared.json()) as { error: { code: number } }).error.code, -32600);
  // streamed in chunks without a Content-Length: answered once past the limit, while the client is still sending
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(sandbox.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      response.resume();
      resolve(response.statusCode!);
      request.destroy();
    });
    request.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const send = () => {
      while (!request.destroyed && request.write(chunk));
      if (!request.destroyed) request.once('drain', send);
    };
    send();
  });
  assert.equal(status, 413);
  assert.equal(await rpc.getHealth().send(), 'ok');
});

test('getTokenAccountsByOwner finds a wallet USDC account by mint or by program, as wallets read balances', async () => {
  const [ata] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: payer.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const byMint = await rpc.getTokenAccountsByOwner(payer.address, { mint: sandbox.asset }, { encoding: 'jsonParsed' }).send();
  assert.equal(byMint.value.length, 1);
  assert.equal(byMint.value[0]!.pubkey, ata);
  const info = byMint.value[0]!.account.data.parsed.info;
  assert.equal(info.mint, sandbox.asset);
  assert.equal(info.owner, payer.address);
  assert.equal(info.tokenAmount.amount, (await sandbox.balanceOf(payer.address)).toString());
  assert.equal(info.tokenAmount.decimals, 6);

  const byProgram = await rpc.getTokenAccountsByOwner(payer.address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' }).send();
  assert.deepEqual(byProgram.value.map((a) => a.pubkey), [ata]);
  const stranger = (await generateKeyPairSigner()).address;
  assert.deepEqual((await rpc.getTokenAccountsByOwner(stranger, { mint: sandbox.asset }, { encoding: 'jsonParsed' }).send()).value, []);
});

test('getTransaction: a landed USDC transfer by its signature, in json, jsonParsed and base64; null when unknown', async () => {
  const [source] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: payer.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ mint: sandbox.asset, owner: sandbox.payTo, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(await transfer(4_321n)));
  const lamportsBefore = (await rpc.getBalance(payer.address).send()).value;
  const signature = await rpc.sendTransaction(wire, { encoding: 'base64' }).send();
  const lamportsAfter = (await rpc.getBalance(payer.address).send()).value;
  const { value: statuses } = await rpc.getSignatureStatuses([signature]).send();

  const tx = await rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
  assert.ok(tx && tx.meta);
  assert.equal(tx.slot, statuses[0]?.slot);
  assert.ok(Math.abs(Number(tx.blockTime) - Date.now() / 1000) < 60);
  assert.equal(String(tx.version), '0'); // kit reads every number it does not know as a bigint
  assert.equal(tx.transaction.signatures[0], signature);
  const keys = tx.transaction.message.accountKeys;
  assert.equal(keys[0], payer.address);
  assert.equal(tx.transaction.message.header.numRequiredSignatures, 1);
  assert.equal(tx.transaction.message.recentBlockhash.length > 0, true);
  assert.deepEqual((tx.transaction.message as { addressTableLookups?: unknown }).addressTableLookups, []);
  const transferIx = tx.transaction.message.instructions[2]!;
  assert.equal(keys[transferIx.programIdIndex], TOKEN_PROGRAM_ADDRESS);
  assert.deepEqual(transferIx.accounts.map((i) => keys[i]), [source, sandbox.asset, destination, payer.address]);

  const { meta } = tx;
  assert.equal(meta.err, null);
  assert.deepEqual(meta.status, { Ok: null });
  assert.equal(meta.fee, 25_000n); // 1 signature + 20_000 CU at 1 lamport each, as getFeeForMessage says
  assert.equal(meta.fee, lamportsBefore - lamportsAfter);
  assert.equal(meta.preBalances[0]! - meta.postBalances[0]!, meta.fee);
  assert.equal(meta.preBalances.length, keys.length);
  assert.ok(meta.logMessages?.some((line) => line.includes(TOKEN_PROGRAM_ADDRESS)));
  assert.ok(meta.computeUnitsConsumed! > 0n);
  assert.deepEqual(meta.rewards, []);
  assert.deepEqual(meta.loadedAddresses, { writable: [], readonly: [] });
  // The token balances move exactly the transferred amount from the payer's account to the operator's.
  const amount = (balances: typeof meta.preTokenBalances, account: string) => {
    const entry = balances?.find((b) => keys[b.accountIndex] === account);
    assert.ok(entry, `no token balance for ${account}`);
    assert.equal(entry.mint, sandbox.asset);
    assert.equal(entry.programId, TOKEN_PROGRAM_ADDRESS);
    assert.equal(entry.uiTokenAmount.decimals, 6);
    return { owner: entry.owner, amount: BigInt(entry.uiTokenAmount.amount) };
  };
  assert.equal(amount(meta.preTokenBalances, source).owner, payer.address);
  assert.equal(amount(meta.postTokenBalances, destination).owner, sandbox.payTo);
  assert.equal(amount(meta.preTokenBalances, source).amount - amount(meta.postTokenBalances, source).amount, 4_321n);
  assert.equal(amount(meta.postTokenBalances, destination).amount - amount(meta.preTokenBalances, destination).amount, 4_321n);
  assert.equal(meta.preTokenBalances?.length, 2);

  // base64: the exact wire bytes that were sent
  const raw = await rpc.getTransaction(signature, { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
  assert.deepEqual(raw?.transaction, [wire, 'base64']);
  assert.equal(raw?.meta?.fee, 25_000n);

  // jsonParsed: account keys with their roles, instructions by program address
  const parsed = await rpc.getTransaction(signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
  assert.deepEqual(parsed?.transaction.message.accountKeys[0], { pubkey: payer.address, signer: true, writable: true, source: 'transaction' });
  const parsedIx = parsed?.transaction.message.instructions[2] as { programId: string; accounts: readonly string[] };
  assert.equal(parsedIx.programId, TOKEN_PROGRAM_ADDRESS);
  assert.deepEqual(parsedIx.accounts, [source, sandbox.asset, destination, payer.address]);

  // A v0 transaction for a client that did not say it reads v0: the validator's -32015.
  await assert.rejects(rpc.getTransaction(signature, { encoding: 'json', commitment: 'confirmed' }).send(), (error: unknown) => {
    assert.ok(isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION), String(error));
    return true;
  });
  // Unknown signature: null, as a validator answers.
  const unknown = getBase58Decoder().decode(new Uint8Array(64).fill(7)) as Signature;
  assert.equal(await rpc.getTransaction(unknown, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send(), null);
  // finalized sees it only once its slot is 32 behind, like a validator's rooted blocks.
  const finalized = () => rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'finalized' }).send();
  assert.equal(await finalized(), null);
  sandbox.advanceBlocks(32);
  assert.equal((await finalized())?.slot, tx.slot);
});

test('getTransaction: a transaction that failed in execution is recorded with its error, its fee paid, no tokens moved', async () => {
  const signed = await signTransactionMessageWithSigners(await transfer(999_999_999_999n));
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', skipPreflight: true }).send();
  const tx = await rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
  assert.ok(tx && tx.meta);
  assert.deepEqual(tx.meta.err as unknown, { InstructionError: [2n, { Custom: 1n }] }); // SPL Token: insufficient funds (kit's bigints)
  assert.deepEqual(tx.meta.status, { Err: tx.meta.err });
  assert.equal(tx.meta.preBalances[0]! - tx.meta.postBalances[0]!, tx.meta.fee);
  assert.deepEqual(tx.meta.postTokenBalances, tx.meta.preTokenBalances);
});

test("getSignaturesForAddress: an address's landed transactions, newest first, paged with before and limit", async () => {
  const sent: Signature[] = [];
  for (const amount of [11n, 12n, 13n]) {
    const wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(await transfer(amount)));
    sent.push(await rpc.sendTransaction(wire, { encoding: 'base64' }).send());
  }
  const listed = await rpc.getSignaturesForAddress(payer.address, { commitment: 'confirmed' }).send();
  const newestFirst = [...sent].reverse();
  assert.deepEqual(listed.slice(0, 3).map((entry) => entry.signature), newestFirst);
  assert.equal(listed[0]!.err, null);
  assert.ok(Math.abs(Number(listed[0]!.blockTime) - Date.now() / 1000) < 60);

  const page = await rpc.getSignaturesForAddress(payer.address, { commitment: 'confirmed', before: newestFirst[0]!, limit: 1 }).send();
  assert.deepEqual(page.map((entry) => entry.signature), [newestFirst[1]]);
  const stranger = await generateKeyPairSigner();
  assert.deepEqual(await rpc.getSignaturesForAddress(stranger.address).send(), []);
});
