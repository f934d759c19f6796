// The voucher digest (the escrow's domain separator kept per chain) and the channel id (kept per config) are the
// EIP-712 hashes the official client signs and computes, on the first call and on every later one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { BATCH_SETTLEMENT_CONTRACT, channelIdOf, voucherSignedByAuthorizer, type ChannelConfig } from './batch-settlement.ts';

const address = () => privateKeyToAccount(generatePrivateKey()).address;

function configOf(payerAuthorizer: Hex, salt: Hex): ChannelConfig {
  return { payer: address(), payerAuthorizer, receiver: address(), receiverAuthorizer: address(), token: address(), withdrawDelay: 900, salt };
}

test('a voucher signed as the official client signs it verifies on every chain, again and again; another amount does not', async () => {
  const authorizer = privateKeyToAccount(generatePrivateKey());
  const config = configOf(authorizer.address, `0x${'01'.repeat(32)}`);
  for (const chainId of [8453, 84532, 8453]) {
    const channelId = channelIdOf(config, chainId);
    for (const amount of [1000n, 2000n]) {
      const signature = await authorizer.signTypedData({
        domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: getAddress(BATCH_SETTLEMENT_CONTRACT) },
        types: voucherTypes,
        primaryType: 'Voucher',
        message: { channelId, maxClaimableAmount: amount },
      });
      assert.equal(voucherSignedByAuthorizer(config, channelId, amount, signature, chainId), true, `chain ${chainId}, ${amount}`);
      assert.equal(voucherSignedByAuthorizer(config, channelId, amount + 1n, signature, chainId), false, 'another amount');
      assert.equal(voucherSignedByAuthorizer(config, channelId, amount, signature, chainId === 8453 ? 84532 : 8453), false, 'another chain');
    }
  }
});

test('the channel id of a config is the official client’s, asked first or again, and changes with any field', () => {
  const config = configOf(address(), `0x${'02'.repeat(32)}`);
  const official = (c: ChannelConfig, chainId: number) => computeChannelId(c as Parameters<typeof computeChannelId>[0], chainId).toLowerCase();
  for (let i = 0; i < 2; i++) assert.equal(channelIdOf(config, 8453), official(config, 8453));
  assert.equal(channelIdOf(config, 84532), official(config, 84532));
  assert.notEqual(channelIdOf(config, 84532), channelIdOf(config, 8453));
  const salted = { ...config, salt: `0x${'03'.repeat(32)}` as Hex };
  assert.equal(channelIdOf(salted, 8453), official(salted, 8453));
  const delayed = { ...config, withdrawDelay: 901 };
  assert.equal(channelIdOf(delayed, 8453), official(delayed, 8453));
  assert.notEqual(channelIdOf(delayed, 8453), channelIdOf(config, 8453));
});
