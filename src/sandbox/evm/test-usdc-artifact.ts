// The committed TestUSDC build (scripts/compile-contracts.ts writes it); read once, never compiled at run time.
import { readFileSync } from 'node:fs';
import type { Abi, Hex } from 'viem';

export interface TestUsdcArtifact {
  contractName: string;
  solcVersion: string;
  evmVersion: string;
  /** sha256 (hex) of contracts/TestUSDC.sol when the artifact was built */
  sourceSha256: string;
  abi: Abi;
  bytecode: Hex;
}

export const TEST_USDC_ARTIFACT_URL = new URL('./test-usdc.artifact.json', import.meta.url);

let cached: TestUsdcArtifact | undefined;

export function loadTestUsdcArtifact(): TestUsdcArtifact {
  if (cached) return cached;
  const parsed = JSON.parse(readFileSync(TEST_USDC_ARTIFACT_URL, 'utf8')) as TestUsdcArtifact;
  if (!Array.isArray(parsed.abi) || !/^0x[0-9a-f]+$/i.test(parsed.bytecode)) {
    throw new Error('test-usdc.artifact.json is malformed: run `npx node scripts/compile-contracts.ts`');
  }
  cached = parsed;
  return parsed;
}
