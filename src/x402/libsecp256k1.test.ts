// Both builds of libsecp256k1 write the same signature for the same digest and key (RFC 6979), the one viem's
// account writes, and recover the signer's key from it; a signature no key made recovers nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { libsecp256k1, nativeLibsecp256k1, webAssemblyLibsecp256k1 } from './libsecp256k1.ts';

const native = nativeLibsecp256k1();
const wasm = webAssemblyLibsecp256k1();
/** where the package ships a prebuilt binary (elsewhere the WebAssembly build is the one used) */
const prebuilt = ['linux-x64', 'darwin-arm64', 'win32-x64'].includes(`${process.platform}-${process.arch}`);
const builds = native ? [native, wasm] : [wasm];

test('the native binding loads where a prebuilt binary exists, and is the one used', { skip: !prebuilt && 'no prebuilt binary here' }, () => {
  assert.ok(native, 'secp256k1/bindings.js did not load');
  assert.equal(libsecp256k1().build, 'native');
});

test('native and WebAssembly: the same signatures as viem, recovering the signer', async () => {
  for (let i = 0; i < 40; i++) {
    const key = bytesToHex(randomBytes(32)) as Hex;
    const digest = randomBytes(32);
    const account = privateKeyToAccount(key);
    const expected = await account.sign({ hash: bytesToHex(digest) });
    const publicKey = hexToBytes(account.publicKey);
    for (const build of builds) {
      const { signature, recoveryId } = build.sign(digest, hexToBytes(key));
      assert.equal(`${bytesToHex(signature)}${(27 + recoveryId).toString(16)}`, expected, `${build.build}, signature ${i}`);
      assert.deepEqual(build.recover(digest, signature, recoveryId as 0 | 1), publicKey, `${build.build}, recovery ${i}`);
    }
  }
});

test('an r that is no curve point’s x recovers nothing, in both builds', () => {
  const signature = hexToBytes(`0x${'ff'.repeat(31)}fe${'11'.repeat(32)}`);
  for (const build of builds) assert.equal(build.recover(randomBytes(32), signature, 0), undefined, build.build);
});
