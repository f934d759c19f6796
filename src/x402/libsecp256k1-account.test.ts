// The libsecp256k1 account writes what viem's own account writes, byte for byte: hashes, messages, typed data and
// transactions of each type the facilitators send.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, parseGwei, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes } from '@x402/evm';
import { libsecp256k1Account } from './libsecp256k1-account.ts';

const to: Hex = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

test('hashes, messages and typed data: the signatures viem’s account writes', async () => {
  for (let i = 0; i < 10; i++) {
    const key = generatePrivateKey();
    const [ours, viems] = [libsecp256k1Account(key), privateKeyToAccount(key)];
    assert.equal(ours.address, viems.address);
    const hash = keccak256(toHex(`hash ${i}`));
    assert.equal(await ours.sign({ hash }), await viems.sign({ hash }));
    assert.equal(await ours.signMessage({ message: `message ${i}` }), await viems.signMessage({ message: `message ${i}` }));
    const typed = {
      domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: to },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization' as const,
      message: { from: viems.address, to, value: BigInt(i + 1), validAfter: 0n, validBefore: 2_000_000_000n, nonce: keccak256(toHex(i)) },
    } as const;
    assert.equal(await ours.signTypedData(typed), await viems.signTypedData(typed));
  }
});

test('transactions (EIP-1559, EIP-2930, legacy): the raw bytes viem’s account writes', async () => {
  const key = generatePrivateKey();
  const [ours, viems] = [libsecp256k1Account(key), privateKeyToAccount(key)];
  const data = '0xa9059cbb' as Hex;
  const transactions = [
    { type: 'eip1559' as const, chainId: 8453, nonce: 7, to, data, gas: 90_000n, maxFeePerGas: parseGwei('2'), maxPriorityFeePerGas: parseGwei('1') },
    { type: 'eip2930' as const, chainId: 137, nonce: 0, to, data, gas: 50_000n, gasPrice: parseGwei('30'), accessList: [] },
    { type: 'legacy' as const, chainId: 1, nonce: 3, to, value: 1n, gas: 21_000n, gasPrice: parseGwei('5') },
  ];
  for (const transaction of transactions) assert.equal(await ours.signTransaction(transaction), await viems.signTransaction(transaction), transaction.type);
});
