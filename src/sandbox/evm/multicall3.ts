// Places Multicall3's batch call on a sandbox chain at its canonical address, where settlement batching
// expects it (the real chains have the canonical deployment there). Our own build: contracts/Multicall3.sol,
// compiled by scripts/compile-contracts.ts into multicall3.artifact.json. It has no constructor state, so it is
// deployed for real and its runtime code moved, as the upto proxy is.
import { readFileSync } from 'node:fs';
import type { Abi, Account, Chain, Hex, PublicClient, TestClient, Transport, WalletClient } from 'viem';
import { MULTICALL3_ADDRESS } from '../../payments/facilitators/evm/multicall3-abi.ts';

export interface Multicall3Artifact {
  sourceSha256: string;
  abi: Abi;
  bytecode: Hex;
}

let artifact: Multicall3Artifact | undefined;
export const loadMulticall3Artifact = (): Multicall3Artifact =>
  (artifact ??= JSON.parse(readFileSync(new URL('./multicall3.artifact.json', import.meta.url), 'utf8')) as Multicall3Artifact);

export async function installMulticall3(
  publicClient: PublicClient<Transport, Chain>,
  testClient: TestClient<'anvil', Transport, Chain>,
  deployer: WalletClient<Transport, Chain, Account>,
): Promise<void> {
  const { abi, bytecode } = loadMulticall3Artifact();
  const hash = await deployer.deployContract({ abi, bytecode });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 10_000 });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('Multicall3 deployment failed');
  const code = await publicClient.getCode({ address: receipt.contractAddress });
  if (!code) throw new Error('Multicall3 has no code after deployment');
  await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: code });
}
