// The sandbox's Solana keys are known before @solana/kit is loaded: node:crypto derives the same addresses kit does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createKeyPairSignerFromPrivateKeyBytes } from '@solana/kit';
import { keepKeys } from '../kept-state.ts';
import { NETWORKS, type SvmNetwork } from '../../x402/networks.ts';
import { keptSvmKeys, svmKeptFiles, svmKeyFrom, svmSandboxKeys } from './sandbox-keys.ts';

test("a seed's address and 64-byte secret key are kit's", async () => {
  for (let i = 0; i < 20; i++) {
    const seed = new Uint8Array(randomBytes(32));
    const key = svmKeyFrom(seed);
    const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
    assert.equal(key.address, signer.address);
    assert.deepEqual(key.secretKey.subarray(0, 32), seed);
    assert.deepEqual(svmKeyFrom(key.secretKey), key, 'the 64 bytes give the same key as their seed');
  }
});

test('fresh keys without kept state; the kept ones once a snapshot is beside them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svm-keys-'));
  try {
    const files = svmKeptFiles(dir, NETWORKS['solana-devnet'] as SvmNetwork);
    const first = svmSandboxKeys(files);
    assert.equal(first.kept, false);
    assert.notEqual(first.keys.operator.address, first.keys.feePayer.address);
    assert.notEqual(svmSandboxKeys(undefined).keys.operator.address, first.keys.operator.address, 'nothing kept: new keys');

    keepKeys(files, keptSvmKeys(first.keys));
    assert.equal(svmSandboxKeys(files).kept, false, 'keys without the snapshot they were kept with are not used');
    writeFileSync(files.state, 'snapshot');
    assert.deepEqual(svmSandboxKeys(files), { keys: first.keys, kept: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
