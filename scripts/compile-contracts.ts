// Builds the contracts the EVM sandbox places on its chains and writes their committed artifacts; the
// service never compiles at run time. Run after editing a contract (or to rebuild Permit2):
//   npx node scripts/compile-contracts.ts            # TestUSDC, the upto proxy, Multicall3's batch and the
//                                                    # batch-settlement escrow with its collectors (solc npm package)
//   npx node scripts/compile-contracts.ts --permit2  # also Permit2, from source (see buildPermit2)
//   npx node scripts/compile-contracts.ts --auth-capture  # also the auth-capture escrow, Coinbase's Commerce
//                                                         # Payments, from vendored source (see buildAuthCapture)
// No native solc and no compiler download: both compilers are npm packages (devDependencies). The two flagged
// builds fetch their libraries with `npm pack` (the registry), so they run only when asked: their sources are
// released code that does not change here, and the artifact tests catch a vendored file edited since.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  compile(input: string, callbacks?: { import: (path: string) => { contents: string } | { error: string } }): string;
  version(): string;
}

/** sha256 of a source text; the artifact tests recompute it to catch a stale artifact. */
function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function run(compiler: Compiler, input: object, readImport?: (path: string) => string | undefined): SolcOutput {
  const callbacks = readImport && {
    import: (path: string) => {
      const contents = readImport(path);
      return contents === undefined ? { error: `not found: ${path}` } : { contents };
    },
  };
  const output = JSON.parse(compiler.compile(JSON.stringify(input), callbacks)) as SolcOutput;
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

/** Where the immutable declared as `name` in `source` sits in a contract's runtime code (solc keys them by AST id). */
function immutableRanges(output: SolcOutput, source: string, contract: SolcContract, name: string): { start: number; length: number }[] {
  const find = (node: AstNode): AstNode | undefined =>
    node.nodeType === 'VariableDeclaration' && node.name === name ? node : node.nodes?.map(find).find(Boolean);
  const ast = output.sources?.[source]?.ast;
  const found = ast && find(ast);
  if (!found) throw new Error(`no ${name} in ${source}`);
  const ranges = contract.evm.deployedBytecode.immutableReferences?.[String(found.id)];
  if (!ranges || ranges.length === 0) throw new Error(`${name} is not referenced in the runtime code`);
  return ranges;
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
    const at = (name: string) => immutableRanges(output, 'src/EIP712.sol', contract, name);
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

// Coinbase's Commerce Payments (base/commerce-payments), the escrow of x402's `auth-capture` scheme: the files the
// escrow and its ERC-3009 collector need, vendored unchanged in contracts/commerce-payments, compiled with
// upstream's deploy profile (foundry.toml [profile.deploy]: via-IR, 100,000 optimizer runs, cancun). Upstream takes
// OpenZeppelin and solady from git submodules; here they come from these exact npm packages.
const AUTH_CAPTURE_DIR = 'commerce-payments';
const AUTH_CAPTURE_LIBRARIES = { '@openzeppelin/contracts': '5.1.0', solady: '0.1.19' } as const;
const AUTH_CAPTURE_SETTINGS = {
  optimizer: { enabled: true, runs: 100_000 },
  viaIR: true,
  evmVersion: EVM_VERSION,
};
const AUTH_CAPTURE_CONTRACTS = {
  AuthCaptureEscrow: 'src/AuthCaptureEscrow.sol',
  TokenStore: 'src/TokenStore.sol',
  ERC3009PaymentCollector: 'src/collectors/ERC3009PaymentCollector.sol',
} as const;
/** The immutables the sandbox fills itself (the collector is deployed for real, its immutables by its constructor). */
const AUTH_CAPTURE_IMMUTABLES: Partial<Record<keyof typeof AUTH_CAPTURE_CONTRACTS, string[]>> = {
  AuthCaptureEscrow: ['tokenStoreImplementation'],
  TokenStore: ['authCaptureEscrow'],
};

/**
 * The escrow deploys its TokenStore in its constructor and keeps its address in an immutable; the TokenStore keeps
 * the escrow's. The artifact records where both sit in the runtime code, so the sandbox can lay down the pair a
 * deployment at the canonical address would leave (auth-capture-contracts.ts).
 */
function buildAuthCapture(): void {
  const work = mkdtempSync(join(tmpdir(), 'auth-capture-'));
  try {
    // each library's package root, keyed by the import prefix upstream's remappings give it
    const roots: Record<string, string> = {};
    for (const [name, version] of Object.entries(AUTH_CAPTURE_LIBRARIES)) {
      const dest = join(work, name.replace('/', '+'));
      mkdirSync(dest);
      execFileSync('npm', ['pack', `${name}@${version}`, '--silent', '--pack-destination', dest], { stdio: ['ignore', 'pipe', 'inherit'] });
      const tarball = readdirSync(dest).find((file) => file.endsWith('.tgz'));
      if (!tarball) throw new Error(`npm pack ${name}@${version} produced no tarball`);
      execFileSync('tar', ['xzf', join(dest, tarball), '-C', dest]);
      roots[name === 'solady' ? 'solady/' : `${name}/`] = join(dest, 'package', name === 'solady' ? 'src' : '');
    }
    const own = new URL(`../contracts/${AUTH_CAPTURE_DIR}/`, import.meta.url);
    const ownFiles = solidityFiles(fileURLToPath(own)).map((file) => relative(fileURLToPath(own), file)).sort();
    const sources: Record<string, { content: string }> = {};
    for (const file of ownFiles) sources[`src/${file}`] = { content: readFileSync(new URL(file, own), 'utf8') };
    const libraries: Record<string, string> = {};
    const readImport = (path: string): string | undefined => {
      const prefix = Object.keys(roots).find((p) => path.startsWith(p));
      if (!prefix) return undefined;
      const content = readFileSync(join(roots[prefix]!, path.slice(prefix.length)), 'utf8');
      libraries[path] = sha256(content);
      return content;
    };
    console.log(`compiling Commerce Payments (${ownFiles.length} files) with solc ${solc.version()} (via-IR); this takes a while`);
    const output = run(
      solc,
      {
        language: 'Solidity',
        sources,
        settings: {
          ...AUTH_CAPTURE_SETTINGS,
          outputSelection: {
            '*': {
              '': ['ast'],
              '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'],
            },
          },
        },
      },
      readImport,
    );
    const contracts = Object.fromEntries(
      Object.entries(AUTH_CAPTURE_CONTRACTS).map(([name, source]) => {
        const contract = output.contracts?.[source]?.[name];
        if (!contract) throw new Error(`solc produced no ${name}`);
        const names = AUTH_CAPTURE_IMMUTABLES[name as keyof typeof AUTH_CAPTURE_CONTRACTS] ?? [];
        return [
          name,
          {
            abi: contract.abi,
            bytecode: `0x${contract.evm.bytecode.object}`,
            deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
            immutables: Object.fromEntries(names.map((immutable) => [immutable, immutableRanges(output, source, contract, immutable)])),
          },
        ];
      }),
    );
    write('auth-capture.artifact.json', {
      source: `contracts/${AUTH_CAPTURE_DIR} (base/commerce-payments, unchanged; see its README.md)`,
      libraries: Object.fromEntries(Object.entries(AUTH_CAPTURE_LIBRARIES).map(([name, version]) => [name, `npm ${name}@${version}`])),
      solcVersion: solc.version(),
      settings: AUTH_CAPTURE_SETTINGS,
      // keyed by the path under contracts/commerce-payments; the artifact test recomputes them
      sourcesSha256: Object.fromEntries(ownFiles.map((file) => [file, sha256(sources[`src/${file}`]!.content)])),
      librariesSha256: Object.fromEntries(Object.entries(libraries).sort(([a], [b]) => a.localeCompare(b))),
      contracts,
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
if (process.argv.includes('--auth-capture')) buildAuthCapture();
