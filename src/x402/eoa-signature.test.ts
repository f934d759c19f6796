// An EOA signature is recovered to its signer: genuine signatures match, tampered and foreign ones do not, and
// only the form token contracts accept (65 bytes, low s) passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, recoverAddress, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverSigner, signedBy } from './eoa-signature.ts';

const digestOf = (text: string) => keccak256(toHex(text));
const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

test('a signature recovers to the address viem recovers, and verifies for its signer only', async () => {
  const signer = privateKeyToAccount(generatePrivateKey());
  const stranger = privateKeyToAccount(generatePrivateKey());
  for (let i = 0; i < 5; i++) {
    const digest = digestOf(`voucher ${i}`);
    const signature = await signer.sign({ hash: digest });
    assert.equal(recoverSigner(digest, signature), (await recoverAddress({ hash: digest, signature })).toLowerCase());
    assert.equal(signedBy(signer.address, digest, signature), true, `voucher ${i}`);
    assert.equal(signedBy(signer.address, digestOf(`voucher ${i + 100}`), signature), false, 'another digest');
    assert.equal(signedBy(signer.address, digest, await stranger.sign({ hash: digest })), false, 'another signer');
  }
});

test('v may be 27/28 or 0/1; high s, other v, short or junk signatures are refused', async () => {
  const signer = privateKeyToAccount(generatePrivateKey());
  const digest = digestOf('form');
  const signature = await signer.sign({ hash: digest });
  const v = Number.parseInt(signature.slice(130), 16);
  const withV = (value: number) => `${signature.slice(0, 130)}${value.toString(16).padStart(2, '0')}` as Hex;
  assert.equal(signedBy(signer.address, digest, withV(v - 27)), true, 'v as 0/1');
  assert.equal(signedBy(signer.address, digest, withV(v + 2)), false, 'v of 29/30');
  // s flipped to its high twin (n - s): the same point, refused as ecrecover in the token contracts refuses it
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const high = `${signature.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${signature.slice(130)}` as Hex;
  assert.equal(signedBy(signer.address, digest, high), false, 'high s');
  assert.equal(signedBy(signer.address, digest, '0x1234'), false, 'not a signature');
  assert.equal(signedBy(signer.address, digest, signature.slice(0, 130) as Hex), false, '64 bytes');
  // an r that is no point's x on the curve: refused, not thrown
  assert.equal(recoverSigner(digest, `0x${'ff'.repeat(31)}fe${signature.slice(66)}` as Hex), undefined);
});
