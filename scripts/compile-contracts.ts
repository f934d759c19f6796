// Compiles contracts/TestUSDC.sol with the solc npm package (no download, no native solc) and writes
// the ABI + bytecode artifact the EVM sandbox deploys. Run after editing the contract:
//   npx node scripts/compile-contracts.ts
// The artifact is committed; the service never compiles at run time.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const SOURCE = new URL('../contracts/TestUSDC.sol', import.meta.url);
const ARTIFACT = new URL('../src/sandbox/evm/test-usdc.artifact.json', import.meta.url);
const CONTRACT = 'TestUSDC';
// Cancun runs on anvil's default hardfork and on every chain x402 targets.
const EVM_VERSION = 'cancun';

interface SolcError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage: string;
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** sha256 of the source text; the artifact test recomputes it to catch a stale artifact. */
function sourceSha256(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex');
}

function compile(source: string): { abi: unknown[]; bytecode: string } {
  const input = {
    language: 'Solidity',
    sources: { 'TestUSDC.sol': { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  for (const w of output.errors ?? []) if (w.severity === 'warning') console.warn(w.formattedMessage);
  const contract = output.contracts?.['TestUSDC.sol']?.[CONTRACT];
  if (!contract) throw new Error(`solc produced no ${CONTRACT}`);
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

function main(): void {
  const source = readFileSync(SOURCE, 'utf8');
  const { abi, bytecode } = compile(source);
  const artifact = {
    contractName: CONTRACT,
    source: 'contracts/TestUSDC.sol',
    solcVersion: solc.version() as string,
    evmVersion: EVM_VERSION,
    sourceSha256: sourceSha256(source),
    abi,
    bytecode,
  };
  writeFileSync(ARTIFACT, `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`wrote ${fileURLToPath(ARTIFACT)} (${(bytecode.length - 2) / 2} bytes of init code)`);
}

main();
