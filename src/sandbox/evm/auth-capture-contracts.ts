// Places what x402 `auth-capture` settles through on a sandbox chain, at the v1.0 addresses the official
// @x402/evm client signs for: Coinbase's Commerce Payments escrow (AuthCaptureEscrow, vendored unchanged in
// contracts/commerce-payments, built by scripts/compile-contracts.ts --auth-capture), the TokenStore it clones per
// operator, and its ERC-3009 payment collector. The escrow's constructor deploys its TokenStore and keeps that
// address in an immutable, and the TokenStore keeps the escrow's: code of a pair deployed elsewhere would not
// recognise each other at the canonical address. So both runtime codes are laid down from the artifact with those
// immutables filled, the TokenStore where the escrow's constructor would have created it. The collector keeps
// only the escrow and Multicall3 addresses (canonical both), so it is deployed for real and its code moved.
import { readFileSync } from 'node:fs';
import {
  concatHex,
  getContractAddress,
  pad,
  size,
  sliceHex,
  type Abi,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type TestClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { AUTH_CAPTURE_ESCROW_V1_0_ADDRESS, EIP3009_TOKEN_COLLECTOR_V1_0_ADDRESS } from '@x402/evm';
import { MULTICALL3_ADDRESS } from '../../payments/facilitators/evm/multicall3-abi.ts';

interface ImmutableRange {
  start: number;
  length: number;
}

type ContractName = 'AuthCaptureEscrow' | 'TokenStore' | 'ERC3009PaymentCollector';

export interface AuthCaptureArtifact {
  /** sha256 of each file under contracts/commerce-payments, by its path there */
  sourcesSha256: Record<string, string>;
  contracts: Record<
    ContractName,
    {
      abi: Abi;
      /** creation code */
      bytecode: Hex;
      /** runtime code with its immutables zeroed */
      deployedBytecode: Hex;
      /** where each immutable the sandbox fills sits in the runtime code */
      immutables: Record<string, ImmutableRange[]>;
    }
  >;
}

let artifact: AuthCaptureArtifact | undefined;
export const loadAuthCaptureArtifact = (): AuthCaptureArtifact =>
  (artifact ??= JSON.parse(readFileSync(new URL('./auth-capture.artifact.json', import.meta.url), 'utf8')) as AuthCaptureArtifact);

/** The ABI of one of the contracts (AuthCaptureEscrow for charge, paymentState, getHash...). */
export const authCaptureAbi = (name: ContractName): Abi => loadAuthCaptureArtifact().contracts[name].abi;

const escrow = AUTH_CAPTURE_ESCROW_V1_0_ADDRESS as Address;

/**
 * Where each contract sits: the v1.0 deployment of the installed @x402/evm; the TokenStore where the escrow's
 * constructor creates it (the escrow's first CREATE).
 */
export const AUTH_CAPTURE_PLACEMENT: Record<ContractName, Address> = {
  AuthCaptureEscrow: escrow,
  TokenStore: getContractAddress({ from: escrow, nonce: 1n }),
  ERC3009PaymentCollector: EIP3009_TOKEN_COLLECTOR_V1_0_ADDRESS as Address,
};

/** `name`'s runtime code with the address immutable `immutable` set to `value`. */
export function authCaptureRuntimeCode(name: 'AuthCaptureEscrow' | 'TokenStore', immutable: string, value: Address): Hex {
  const { deployedBytecode, immutables } = loadAuthCaptureArtifact().contracts[name];
  const ranges = immutables[immutable];
  if (!ranges?.length) throw new Error(`the artifact has no immutable ${immutable} for ${name}`);
  const word = pad(value.toLowerCase() as Hex, { size: 32 });
  let code = deployedBytecode;
  for (const { start, length } of ranges) {
    if (length !== size(word)) throw new Error('immutable of unexpected size');
    code = concatHex([sliceHex(code, 0, start), word, sliceHex(code, start + length)]);
  }
  return code;
}

export async function installAuthCaptureContracts(
  publicClient: PublicClient<Transport, Chain>,
  testClient: TestClient<'anvil', Transport, Chain>,
  deployer: WalletClient<Transport, Chain, Account>,
): Promise<void> {
  const placement = AUTH_CAPTURE_PLACEMENT;
  await testClient.setCode({
    address: placement.TokenStore,
    bytecode: authCaptureRuntimeCode('TokenStore', 'authCaptureEscrow', placement.AuthCaptureEscrow),
  });
  await testClient.setCode({
    address: placement.AuthCaptureEscrow,
    bytecode: authCaptureRuntimeCode('AuthCaptureEscrow', 'tokenStoreImplementation', placement.TokenStore),
  });
  // a contract starts at nonce 1 and the constructor's CREATE took it: what a real deployment leaves
  await testClient.setNonce({ address: placement.AuthCaptureEscrow, nonce: 2 });

  const { abi, bytecode } = loadAuthCaptureArtifact().contracts.ERC3009PaymentCollector;
  const hash = await deployer.deployContract({ abi, bytecode, args: [placement.AuthCaptureEscrow, MULTICALL3_ADDRESS] });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 10_000 });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('ERC3009PaymentCollector deployment failed');
  const code = await publicClient.getCode({ address: receipt.contractAddress });
  if (!code) throw new Error('ERC3009PaymentCollector has no code after deployment');
  await testClient.setCode({ address: placement.ERC3009PaymentCollector, bytecode: code });
}
