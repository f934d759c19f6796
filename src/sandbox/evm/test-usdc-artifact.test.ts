import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadTestUsdcArtifact } from './test-usdc-artifact.ts';

test('the committed TestUSDC artifact was built from the current contract source', () => {
  const source = readFileSync(new URL('../../../contracts/TestUSDC.sol', import.meta.url), 'utf8');
  const artifact = loadTestUsdcArtifact();

  const hash = createHash('sha256').update(source, 'utf8').digest('hex');
  assert.equal(artifact.sourceSha256, hash, 'stale artifact: run `npx node scripts/compile-contracts.ts`');
  assert.match(artifact.solcVersion, /^0\.8\.\d+/);
  assert.match(artifact.bytecode, /^0x[0-9a-f]+$/);
});

test('the artifact exposes what x402 needs from USDC', () => {
  const names = new Set(
    loadTestUsdcArtifact()
      .abi.filter((item) => item.type === 'function')
      .map((item) => item.name),
  );
  for (const name of [
    'transferWithAuthorization',
    'receiveWithAuthorization',
    'cancelAuthorization',
    'authorizationState',
    'DOMAIN_SEPARATOR',
    'eip712Domain',
    'version',
    'balanceOf',
    'mint',
    'permit',
    'nonces',
  ]) {
    assert.ok(names.has(name), `missing ${name}`);
  }
});
