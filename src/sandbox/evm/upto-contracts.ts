// Places what x402 `upto` needs on a sandbox chain, at the addresses the official client signs for:
// Uniswap's Permit2 (built from source, scripts/compile-contracts.ts --permit2) and our upto proxy
// (contracts/UptoPermit2Proxy.sol, the interface of x402's x402UptoPermit2Proxy).
import { readFileSync } from 'node:fs';
import {
  concatHex,
  encodeAbiParameters,
  keccak256,
  size,
  sliceHex,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TestClient,
  type WalletClient,
  type Chain,
  type Transport,
  type Account,
} from 'viem';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from '../../x402/upto.ts';

interface ImmutableRange {
  start: number;
  length: number;
}

export interface Permit2Artifact {
  abi: Abi;
  /** creation code: the constructor fills the two immutables below */
  bytecode: Hex;
  deployedBytecode: Hex;
  immutables: { cachedDomainSeparator: ImmutableRange[]; cachedChainId: ImmutableRange[] };
}

export interface ProxyArtifact {
  sourceSha256: string;
  abi: Abi;
  bytecode: Hex;
}

const read = <T>(name: string): T => JSON.parse(readFileSync(new URL(`./${name}`, import.meta.url), 'utf8')) as T;
let permit2: Permit2Artifact | undefined;
let proxy: ProxyArtifact | undefined;
export const loadPermit2Artifact = (): Permit2Artifact => (permit2 ??= read<Permit2Artifact>('permit2.artifact.json'));
export const loadUptoProxyArtifact = (): ProxyArtifact => (proxy ??= read<ProxyArtifact>('upto-proxy.artifact.json'));

const DOMAIN_TYPEHASH = keccak256(toHex('EIP712Domain(string name,uint256 chainId,address verifyingContract)'));
const PERMIT2_NAME_HASH = keccak256(toHex('Permit2'));

/** Permit2's EIP-712 domain separator on `chainId` at `address`, as its constructor computes it. */
export function permit2DomainSeparator(chainId: number, address: Address): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
      [DOMAIN_TYPEHASH, PERMIT2_NAME_HASH, BigInt(chainId), address],
    ),
  );
}

/**
 * Permit2's runtime code as a deployment at `address` on `chainId` leaves it. Its constructor caches the
 * chain id and the domain separator (which includes its own address) in immutables; code deployed elsewhere
 * and copied to the canonical address would keep the wrong separator and reject every signature.
 */
export function permit2RuntimeCode(chainId: number, address: Address = PERMIT2_ADDRESS): Hex {
  const { deployedBytecode, immutables } = loadPermit2Artifact();
  const fill = (code: Hex, ranges: ImmutableRange[], value: Hex): Hex => {
    let out = code;
    for (const { start, length } of ranges) {
      if (size(value) !== length) throw new Error('immutable of unexpected size');
      out = concatHex([sliceHex(out, 0, start), value, sliceHex(out, start + length)]);
    }
    return out;
  };
  const withChainId = fill(deployedBytecode, immutables.cachedChainId, toHex(BigInt(chainId), { size: 32 }));
  return fill(withChainId, immutables.cachedDomainSeparator, permit2DomainSeparator(chainId, address));
}

export interface UptoContractClients {
  chain: Chain;
  publicClient: PublicClient<Transport, Chain>;
  testClient: TestClient<'anvil', Transport, Chain>;
  /** a funded throwaway account that deploys the proxy */
  deployer: WalletClient<Transport, Chain, Account>;
}

/**
 * Lays Permit2 at its canonical address and the upto proxy at x402's upto address. The proxy is deployed
 * for real (its constructor stores Permit2's address, its only state) and its code then moved.
 */
export async function installUptoContracts({ chain, publicClient, testClient, deployer }: UptoContractClients): Promise<void> {
  await testClient.setCode({ address: PERMIT2_ADDRESS, bytecode: permit2RuntimeCode(chain.id) });

  const artifact = loadUptoProxyArtifact();
  const hash = await deployer.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: [PERMIT2_ADDRESS] });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 10_000 });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('upto proxy deployment failed');
  const code = await publicClient.getCode({ address: receipt.contractAddress });
  if (!code) throw new Error('upto proxy has no code after deployment');
  await testClient.setCode({ address: UPTO_PROXY_ADDRESS, bytecode: code });
}
