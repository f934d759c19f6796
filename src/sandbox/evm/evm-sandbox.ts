// A local EVM chain for tests and the offline demo: anvil with the network's real chain id, a freshly
// deployed TestUSDC using that network's EIP-712 domain and placed at its real USDC address, Permit2 and
// the x402 upto proxy, Multicall3's batch call, the x402 batch-settlement escrow with its deposit collectors and
// Coinbase's auth-capture escrow (Commerce Payments v1.0) with its ERC-3009 collector at their canonical addresses,
// generated operator keys, and a faucet.
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
  parseEther,
  toHex,
  type Address,
  type Chain,
  type Hex,
} from 'viem';
import { existsSync, renameSync, statSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { EvmNetwork, NetworkName } from '../../x402/networks.ts';
import { startAnvil } from './anvil.ts';
import { rpcFetch } from '../../payments/facilitators/rpc-fetch.ts';
import type { ChainListen } from '../listen.ts';
import { keepKeys, keptFiles, readKeptKeys } from '../kept-state.ts';
import { loadTestUsdcArtifact } from './test-usdc-artifact.ts';
import { installUptoContracts } from './upto-contracts.ts';
import { installMulticall3 } from './multicall3.ts';
import { installBatchSettlementContracts } from './batch-settlement-contracts.ts';
import { installAuthCaptureContracts } from './auth-capture-contracts.ts';

export interface EvmSandboxOptions {
  /** extra anvil flags */
  anvilArgs?: string[];
  startupTimeoutMs?: number;
  /** where the node listens and the URL buyers get (default 127.0.0.1, a port the OS picks) */
  listen?: ChainListen;
  /**
   * where the chain's state (anvil's dump, written every second) and its keys are kept across restarts
   * (kept-state.ts); absent: nothing is kept
   */
  stateDir?: string;
}

/** What a restarted chain needs of its first start (its contracts and balances are in anvil's state). */
interface KeptEvmKeys {
  deployer: Hex;
  settlement: Hex;
  upto: Hex;
  payTo: Address;
}

export interface FaucetResult {
  /** the address's test USDC balance after minting (atomic units, 6 decimals) */
  balance: bigint;
  /** its native balance (wei) after the gas top-up */
  nativeBalance: bigint;
}

export interface EvmSandbox {
  network: NetworkName;
  chainId: number;
  /** where this process reaches the node */
  rpcUrl: string;
  /** where a buyer reaches it (listen.publicHost) */
  publicRpcUrl: string;
  chain: Chain;
  /** the deployed TestUSDC */
  asset: Address;
  eip712: { name: string; version: string };
  /** pays settlement gas; funded with native currency */
  settlementPrivateKey: Hex;
  settlementAddress: Address;
  /** settles `upto` payments (the facilitator its payers name); funded, and apart from the exact key's nonces */
  uptoSettlementPrivateKey: Hex;
  /** receives payments; a separate generated account (its key is not kept) */
  payTo: Address;
  /**
   * Mints test USDC (default 100 USDC, at most 1,000,000 USDC per call) and tops up native gas to
   * at least 1 ETH. Waits for the mint's receipt, so it needs automine on.
   */
  faucet(address: Address, amount?: bigint): Promise<FaucetResult>;
  balanceOf(address: Address): Promise<bigint>;
  /** turns anvil's instant mining off/on (tests of slow or lost settlements) */
  setAutomine(enabled: boolean): Promise<void>;
  mine(blocks?: number): Promise<void>;
  stop(): Promise<void>;
}

export const FAUCET_DEFAULT_AMOUNT = 100_000_000n; // 100 USDC
export const FAUCET_MAX_AMOUNT = 1_000_000_000_000n; // 1,000,000 USDC
/** Faucet recipients get at least this much native currency, enough for many approvals/transfers. */
export const FAUCET_NATIVE_FLOOR = parseEther('1');

const erc20Abi = parseAbi([
  'function mint(address to, uint256 amount) returns (bool)',
  'function balanceOf(address account) view returns (uint256)',
]);

export async function startEvmSandbox(network: EvmNetwork, options: EvmSandboxOptions = {}): Promise<EvmSandbox> {
  const files = options.stateDir === undefined ? undefined : keptFiles(options.stateDir, network.name, 'anvil.json');
  const kept = readKeptKeys<KeptEvmKeys>(files);
  const anvil = () =>
    startAnvil({
      chainId: network.chainId,
      // the state is loaded from the file if it is there, and written to it every second
      extraArgs: [...(options.anvilArgs ?? []), ...(files ? ['--state', files.state, '--state-interval', '1'] : [])],
      startupTimeoutMs: options.startupTimeoutMs,
      listen: options.listen,
    });
  // a state file anvil cannot load (cut by a crash mid-write) is set aside, and the chain starts afresh
  const node = await anvil().catch((error: unknown) => {
    if (!files || !existsSync(files.state)) throw error;
    renameSync(files.state, `${files.state}.unreadable`);
    return anvil();
  });
  try {
    const chain = defineChain({
      id: network.chainId,
      name: `${network.name} (sandbox)`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [node.rpcUrl] } },
    });
    // anvil answers instantly; viem's 4 s default polling would make every wait slow. Over node:http (rpcFetch), as
    // the facilitators reach the same node: the global fetch would compile undici's WebAssembly HTTP parser at
    // startup, whose optimising compile alone peaks at ~24 MB of malloc that the idle process keeps
    const transport = http(node.rpcUrl, { fetchFn: rpcFetch });
    const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
    const testClient = createTestClient({ chain, transport, mode: 'anvil' });

    // A deployer (token owner, the only minter), funded by the node itself: no known keys. A restarted chain
    // whose state still holds the token keeps its keys; anything else starts afresh.
    const resumed = kept !== undefined && Boolean(await publicClient.getCode({ address: getAddress(network.usdc) }));
    const keys: KeptEvmKeys =
      resumed && kept
        ? kept
        : { deployer: generatePrivateKey(), settlement: generatePrivateKey(), upto: generatePrivateKey(), payTo: privateKeyToAccount(generatePrivateKey()).address };
    const deployer = privateKeyToAccount(keys.deployer);
    const deployerWallet = createWalletClient({ chain, transport, account: deployer });
    const settlementPrivateKey = keys.settlement;
    const settlementAddress = privateKeyToAccount(settlementPrivateKey).address;
    const uptoSettlementPrivateKey = keys.upto;
    const payTo = keys.payTo;

    // The token is moved to the network's real USDC address, so the sandbox's 402 bodies name the same
    // asset as the real network's and clients that only trust known USDC addresses (@x402/fetch) pay.
    // The code carries the immutable owner; the first slots carry name, symbol, supply and version.
    const relocate = async (from: Address, to: Address): Promise<Address> => {
      const code = await publicClient.getCode({ address: from });
      if (!code) throw new Error('TestUSDC has no code after deployment');
      await testClient.setCode({ address: to, bytecode: code });
      for (let slot = 0; slot < 16; slot++) {
        const value = await publicClient.getStorageAt({ address: from, slot: toHex(slot, { size: 32 }) });
        if (value && BigInt(value) !== 0n) await testClient.setStorageAt({ address: to, index: slot, value });
      }
      return to;
    };

    const asset = getAddress(network.usdc);
    if (!resumed) {
      for (const key of [keys.deployer, keys.settlement, keys.upto]) {
        await testClient.setBalance({ address: privateKeyToAccount(key).address, value: parseEther('1000') });
      }
      const artifact = loadTestUsdcArtifact();
      const deployHash = await deployerWallet.deployContract({
        abi: artifact.abi,
        bytecode: artifact.bytecode,
        args: [network.eip712.name, network.eip712.version],
      });
      const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash, timeout: 10_000 });
      if (deployed.status !== 'success' || !deployed.contractAddress) throw new Error('TestUSDC deployment failed');
      await relocate(getAddress(deployed.contractAddress), asset);
      await installUptoContracts({ chain, publicClient, testClient, deployer: deployerWallet });
      await installMulticall3(publicClient, testClient, deployerWallet);
      await installBatchSettlementContracts(publicClient, testClient, deployerWallet);
      await installAuthCaptureContracts(publicClient, testClient, deployerWallet);
      keepKeys(files, keys);
    }

    const balanceOf = (address: Address): Promise<bigint> =>
      publicClient.readContract({ address: asset, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

    // Mints go out one at a time from one key, so concurrent faucet calls never race on its nonce.
    let queue: Promise<unknown> = Promise.resolve();
    const faucet = (address: Address, amount: bigint = FAUCET_DEFAULT_AMOUNT): Promise<FaucetResult> => {
      if (amount <= 0n || amount > FAUCET_MAX_AMOUNT) {
        return Promise.reject(new RangeError(`faucet amount must be between 1 and ${FAUCET_MAX_AMOUNT} atomic units`));
      }
      const run = async (): Promise<FaucetResult> => {
        const hash = await deployerWallet.writeContract({
          address: asset,
          abi: erc20Abi,
          functionName: 'mint',
          args: [address, amount],
        });
        const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 10_000 });
        if (receipt.status !== 'success') throw new Error(`faucet mint reverted (${hash})`);
        let nativeBalance = await publicClient.getBalance({ address });
        if (nativeBalance < FAUCET_NATIVE_FLOOR) {
          await testClient.setBalance({ address, value: FAUCET_NATIVE_FLOOR });
          nativeBalance = FAUCET_NATIVE_FLOOR;
        }
        return { balance: await balanceOf(address), nativeBalance };
      };
      const result = queue.then(run, run);
      queue = result.catch(() => undefined);
      return result;
    };

    return {
      network: network.name,
      chainId: network.chainId,
      rpcUrl: node.rpcUrl,
      publicRpcUrl: node.publicRpcUrl,
      chain,
      asset,
      eip712: { ...network.eip712 },
      settlementPrivateKey,
      settlementAddress,
      uptoSettlementPrivateKey,
      payTo,
      faucet,
      balanceOf,
      setAutomine: (enabled) => testClient.setAutomine(enabled),
      mine: (blocks = 1) => testClient.mine({ blocks }),
      // kept: anvil writes its state every second; a stop waits for the next write, so nothing of the last second is lost
      stop: async () => {
        if (files) await nextWrite(files.state, 3_000);
        await node.stop();
      },
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

/** Resolves once `file` is written after this call (or after `timeoutMs`: anvil gone, nothing more to wait for). */
async function nextWrite(file: string, timeoutMs: number): Promise<void> {
  const since = Date.now();
  const writtenAt = () => (existsSync(file) ? statSync(file).mtimeMs : 0);
  while (writtenAt() <= since && Date.now() - since < timeoutMs) await new Promise((resolve) => setTimeout(resolve, 50));
}
