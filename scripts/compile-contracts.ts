// Builds the contracts the EVM sandbox places on its chains and writes their committed artifacts; the
// service never compiles at run time. Run after editing a contract (or to rebuild Permit2):
//   npx node scripts/compile-contracts.ts            # TestUSDC, the upto proxy, Multicall3's batch and the
//                                                    # batch-settlement escrow with its collectors (solc npm package)
//   npx node scripts/compile-contracts.ts --permit2  # also Permit2, from source (see buildPermit2)
// No native solc and no compiler download: both compilers are npm packages (devDependencies).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import solc0817 from 'solc-0.8.17';

// Cancun runs on anvil's default hardfork and on every chain x402 targets (the proxy's lock uses EIP-1153).
const EVM_VERSION = 'cancun';

interface SolcError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage: string;
}

interface AstNode {
  nodeType: string;
  id: number;
  name?: string;
  nodes?: AstNode[];
}

interface SolcContract {
  abi: unknown[];
  evm: {
    bytecode: { object: string };
    deployedBytecode: { object: string; immutableReferences?: Record<string, { start: number; length: number }[]> };
  };
}

interface SolcOutput {
  errors?: SolcError[];
  sources?: Record<string, { ast: AstNode }>;
  contracts?: Record<string, Record<string, SolcContract>>;
}

interface Compiler {
  compile(input: string): string;
  version(): string;
}

/** sha256 of a source text; the artifact tests recompute it to catch a stale artifact. */
function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function run(compiler: Compiler, input: object): SolcOutput {
  const output = JSON.parse(compiler.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  for (const w of output.errors ?? []) if (w.severity === 'warning') console.warn(w.formattedMessage);
  return output;
}

function compileOwn(file: string): { source: string; output: SolcOutput } {
  const source = readFileSync(new URL(`../contracts/${file}`, import.meta.url), 'utf8');
  const output = run(solc, {
    language: 'Solidity',
    sources: { [file]: { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  });
  return { source, output };
}

/** One of our own single-file contracts, compiled with the solc devDependency. */
function buildOwn(file: string, contractName: string, artifactName: string): void {
  const { source, output } = compileOwn(file);
  const contract = output.contracts?.[file]?.[contractName];
  if (!contract) throw new Error(`solc produced no ${contractName}`);
  write(artifactName, {
    contractName,
    source: `contracts/${file}`,
    solcVersion: solc.version(),
    evmVersion: EVM_VERSION,
    sourceSha256: sha256(source),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
  });
}

/** A file of several contracts placed together (the batch-settlement escrow and its collectors): one artifact. */
function buildOwnGroup(file: string, contractNames: string[], artifactName: string): void {
  const { source, output } = compileOwn(file);
  const contracts = Object.fromEntries(
    contractNames.map((name) => {
      const contract = output.contracts?.[file]?.[name];
      if (!contract) throw new Error(`solc produced no ${name}`);
      return [name, { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }];
    }),
  );
  write(artifactName, {
    source: `contracts/${file}`,
    solcVersion: solc.version(),
    evmVersion: EVM_VERSION,
    sourceSha256: sha256(source),
    contracts,
  });
}

// Uniswap's Permit2 as released (Uniswap/permit2, the copy inside this exact npm package, with the solmate
// files it imports), compiled with Permit2's own settings (foundry.toml: solc 0.8.17, via-IR, 1,000,000
// optimizer runs, no metadata hash).
const PERMIT2_PACKAGE = '@uniswap/v4-periphery@1.0.3';
const PERMIT2_SETTINGS = {
  optimizer: { enabled: true, runs: 1_000_000 },
  viaIR: true,
  metadata: { bytecodeHash: 'none' },
};

function solidityFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.sol'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Permit2 keeps its EIP-712 domain separator and the chain id it was computed for in two immutables set by
 * its constructor. The artifact records where they sit in the runtime code, so the sandbox can lay down
 * exactly the code a deployment at the canonical address on each chain would have.
 */
function buildPermit2(): void {
  const work = mkdtempSync(join(tmpdir(), 'permit2-'));
  try {
    execFileSync('npm', ['pack', PERMIT2_PACKAGE, '--silent', '--pack-destination', work], { stdio: ['ignore', 'pipe', 'inherit'] });
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${PERMIT2_PACKAGE} produced no tarball`);
    execFileSync('tar', ['xzf', join(work, tarball), '-C', work, 'package/lib/permit2/src', 'package/lib/permit2/lib/solmate/src']);
    const root = join(work, 'package/lib/permit2');
    const sources: Record<string, { content: string }> = {};
    for (const file of solidityFiles(join(root, 'src'))) sources[relative(root, file)] = { content: readFileSync(file, 'utf8') };
    for (const file of ['src/tokens/ERC20.sol', 'src/utils/SafeTransferLib.sol']) {
      sources[`solmate/${file}`] = { content: readFileSync(join(root, 'lib/solmate', file), 'utf8') };
    }
    console.log(`compiling Permit2 (${Object.keys(sources).length} files) with solc ${solc0817.version()}; this takes a while`);
    const output = run(solc0817, {
      language: 'Solidity',
      sources,
      settings: {
        ...PERMIT2_SETTINGS,
        outputSelection: {
          '*': { '': ['ast'] },
          'src/Permit2.sol': { Permit2: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] },
        },
      },
    });
    const contract = output.contracts?.['src/Permit2.sol']?.Permit2;
    if (!contract) throw new Error('solc produced no Permit2');
    const eip712 = output.sources?.['src/EIP712.sol']?.ast;
    const idOf = (name: string): number => {
      const find = (node: AstNode): AstNode | undefined =>
        node.nodeType === 'VariableDeclaration' && node.name === name ? node : node.nodes?.map(find).find(Boolean);
      const found = eip712 && find(eip712);
      if (!found) throw new Error(`no ${name} in EIP712.sol`);
      return found.id;
    };
    const references = contract.evm.deployedBytecode.immutableReferences ?? {};
    const at = (name: string) => references[String(idOf(name))] ?? [];
    write('permit2.artifact.json', {
      contractName: 'Permit2',
      source: `npm ${PERMIT2_PACKAGE}, lib/permit2 (Uniswap/permit2) with lib/solmate`,
      solcVersion: solc0817.version(),
      settings: PERMIT2_SETTINGS,
      sourcesSha256: Object.fromEntries(Object.entries(sources).map(([path, { content }]) => [path, sha256(content)])),
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      immutables: { cachedDomainSeparator: at('_CACHED_DOMAIN_SEPARATOR'), cachedChainId: at('_CACHED_CHAIN_ID') },
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function write(artifactName: string, artifact: object): void {
  const path = new URL(`../src/sandbox/evm/${artifactName}`, import.meta.url);
  writeFileSync(path, `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`wrote ${fileURLToPath(path)}`);
}

buildOwn('TestUSDC.sol', 'TestUSDC', 'test-usdc.artifact.json');
buildOwn('UptoPermit2Proxy.sol', 'UptoPermit2Proxy', 'upto-proxy.artifact.json');
buildOwn('Multicall3.sol', 'Multicall3', 'multicall3.artifact.json');
buildOwnGroup(
  'BatchSettlement.sol',
  ['X402BatchSettlement', 'ERC3009DepositCollector', 'Permit2DepositCollector'],
  'batch-settlement.artifact.json',
);
if (process.argv.includes('--permit2')) buildPermit2();
