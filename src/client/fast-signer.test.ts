// The proxy's signer writes the very signatures viem writes (RFC 6979 signatures are deterministic), for vouchers
// by the short way and for any other typed document, and the gateway's voucher check accepts them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bytesToHex, getAddress, hashTypedData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { fastEvmSigner, typedDataDigest } from './fast-signer.ts';
import { libsecp256k1Account } from '../x402/libsecp256k1-account.ts';
import { BATCH_SETTLEMENT_CONTRACT, channelIdOf, voucherSignedByAuthorizer } from '../x402/batch-settlement.ts';

const key = generatePrivateKey();
const account = privateKeyToAccount(key);
const signer = fastEvmSigner(libsecp256k1Account(key));
const config = {
  payer: account.address,
  payerAuthorizer: account.address,
  receiver: privateKeyToAccount(generatePrivateKey()).address,
  receiverAuthorizer: privateKeyToAccount(generatePrivateKey()).address,
  token: getAddress('0x833589fcd6edb6e08f4c3c32d4f71b54bda02913'),
  withdrawDelay: 900,
  salt: `0x${'00'.repeat(32)}` as Hex,
};

const voucher = (chainId: number, maxClaimableAmount: bigint) => ({
  domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: getAddress(BATCH_SETTLEMENT_CONTRACT) },
  types: voucherTypes,
  primaryType: 'Voucher' as const,
  message: { channelId: channelIdOf(config, chainId), maxClaimableAmount },
});

test('a voucher: the same digest and signature as viem, accepted by the gateway’s check', async () => {
  for (const [chainId, amount] of [[8453, 1n], [84532, 123_456_789n], [8453, (1n << 128n) - 1n]] as const) {
    const typed = voucher(chainId, amount);
    assert.equal(bytesToHex(typedDataDigest(typed)), hashTypedData(typed));
    const signature = await signer.signTypedData(typed);
    assert.equal(signature, await account.signTypedData(typed));
    assert.equal(voucherSignedByAuthorizer(config, typed.message.channelId, amount, signature, chainId), true);
  }
});

test('any other typed document (an ERC-3009 authorization, as the exact scheme signs it) is signed as viem signs it', async () => {
  const typed = {
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: config.token },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization' as const,
    message: { from: account.address, to: config.receiver, value: 5_000_000n, validAfter: 0n, validBefore: 2_000_000_000n, nonce: `0x${'07'.repeat(32)}` as Hex },
  };
  assert.equal(await signer.signTypedData(typed), await account.signTypedData(typed));
});

test('a document that only looks like a voucher (another contract) is hashed in full', () => {
  const typed = voucher(8453, 5n);
  const other = { ...typed, domain: { ...typed.domain, verifyingContract: config.receiver } };
  assert.equal(bytesToHex(typedDataDigest(other)), hashTypedData(other));
  assert.notEqual(bytesToHex(typedDataDigest(other)), bytesToHex(typedDataDigest(typed)));
});
