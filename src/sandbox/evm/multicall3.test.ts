// The sandbox's Multicall3 is our own build of the batch call, and must answer the canonical deployment's calldata.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { toFunctionSelector, type AbiFunction } from 'viem';
import { multicall3Abi } from '../../payments/facilitators/evm/multicall3-abi.ts';
import { loadMulticall3Artifact } from './multicall3.ts';

test('the committed Multicall3 artifact was built from the current contract source', () => {
  const source = readFileSync(new URL('../../../contracts/Multicall3.sol', import.meta.url), 'utf8');
  const hash = createHash('sha256').update(source, 'utf8').digest('hex');
  assert.equal(loadMulticall3Artifact().sourceSha256, hash, 'stale artifact: run `npx node scripts/compile-contracts.ts`');
});

test("its aggregate3 is Multicall3's (selector 0x82ad56cb), the one the settlement batcher encodes", () => {
  const built = loadMulticall3Artifact().abi.find((item): item is AbiFunction => item.type === 'function' && item.name === 'aggregate3');
  assert.ok(built);
  assert.equal(toFunctionSelector(built), '0x82ad56cb');
  assert.equal(toFunctionSelector(multicall3Abi[0]), '0x82ad56cb');
});

test("its tryAggregate is Multicall3's (selector 0xbce38bd7), the one @x402/evm's batch-settlement reads call", () => {
  const built = loadMulticall3Artifact().abi.find((item): item is AbiFunction => item.type === 'function' && item.name === 'tryAggregate');
  assert.ok(built);
  assert.equal(toFunctionSelector(built), '0xbce38bd7');
});
