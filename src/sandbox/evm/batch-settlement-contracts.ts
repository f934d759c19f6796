// Places what x402 `batch-settlement` needs on a sandbox chain, at the addresses the official client and
// facilitator use: our escrow (contracts/BatchSettlement.sol, the interface of x402's x402BatchSettlement) and
// its ERC-3009 and Permit2 deposit collectors. None keeps constructor state (the escrow computes its EIP-712
// domain from its own address, the collectors name the canonical escrow), so each is deployed for real and its
// runtime code moved, as Multicall3 and the upto proxy are.
import { readFileSync } from 'node:fs';
import type { Abi, Account, Address, Chain, Hex, PublicClient, TestClient, Transport, WalletClient } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@x402/evm';

/** @x402/evm 2.27 uses this address (its batch-settlement constants) but does not export it. */
const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS = '0x4020425FAf3B746C082C2f942b4E5159887B0005';

type ContractName = 'X402BatchSettlement' | 'ERC3009DepositCollector' | 'Permit2DepositCollector';

export interface BatchSettlementArtifact {
  sourceSha256: string;
  contracts: Record<ContractName, { abi: Abi; bytecode: Hex }>;
}

let artifact: BatchSettlementArtifact | undefined;
export const loadBatchSettlementArtifact = (): BatchSettlementArtifact =>
  (artifact ??= JSON.parse(
    readFileSync(new URL('./batch-settlement.artifact.json', import.meta.url), 'utf8'),
  ) as BatchSettlementArtifact);

/** Where each contract sits: the canonical addresses of the installed @x402/evm. */
export const BATCH_SETTLEMENT_PLACEMENT: Record<ContractName, Address> = {
  X402BatchSettlement: BATCH_SETTLEMENT_ADDRESS as Address,
  ERC3009DepositCollector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS as Address,
  Permit2DepositCollector: PERMIT2_DEPOSIT_COLLECTOR_ADDRESS as Address,
};

export async function installBatchSettlementContracts(
  publicClient: PublicClient<Transport, Chain>,
  testClient: TestClient<'anvil', Transport, Chain>,
  deployer: WalletClient<Transport, Chain, Account>,
): Promise<void> {
  const { contracts } = loadBatchSettlementArtifact();
  for (const [name, address] of Object.entries(BATCH_SETTLEMENT_PLACEMENT) as [ContractName, Address][]) {
    const { abi, bytecode } = contracts[name];
    const hash = await deployer.deployContract({ abi, bytecode });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 10_000 });
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`${name} deployment failed`);
    const code = await publicClient.getCode({ address: receipt.contractAddress });
    if (!code) throw new Error(`${name} has no code after deployment`);
    await testClient.setCode({ address, bytecode: code });
  }
}
