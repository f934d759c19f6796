// A voucher signature is checked by recovery the first time a payer authorizer is seen, then against its kept key:
// both give the same answers, for genuine, tampered and foreign signatures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak256, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signedBy } from './voucher-signature.ts';

const digestOf = (text: string) => keccak256(toHex(text));

test('the first and every later signature of a signer verify; others and altered ones do not', async () => {
  const signer = privateKeyToAccount(generatePrivateKey());
  const stranger = privateKeyToAccount(generatePrivateKey());
  for (let i = 0; i < 5; i++) {
    const digest = digestOf(`voucher ${i}`);
    const signature = await signer.sign({ hash: digest });
    assert.equal(await signedBy(signer.address, digest, signature), true, `voucher ${i}`);
    assert.equal(await signedBy(signer.address, digestOf(`voucher ${i + 100}`), signature), false, 'another digest');
    assert.equal(await signedBy(signer.address, digest, await stranger.sign({ hash: digest })), false, 'another signer');
    // s flipped to its high twin (n - s): the same point, refused as Ethereum signers never produce it
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const high = `${signature.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${signature.slice(130)}` as Hex;
    assert.equal(await signedBy(signer.address, digest, high), false, 'high s');
    assert.equal(await signedBy(signer.address, digest, '0x1234'), false, 'not a signature');
  }
});

test("a stranger seen first does not make its key the signer's", async () => {
  const signer = privateKeyToAccount(generatePrivateKey());
  const stranger = privateKeyToAccount(generatePrivateKey());
  const digest = digestOf('first');
  assert.equal(await signedBy(signer.address, digest, await stranger.sign({ hash: digest })), false);
  assert.equal(await signedBy(signer.address, digest, await signer.sign({ hash: digest })), true);
});
