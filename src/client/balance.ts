// What an address holds on a network, read from a chain's JSON-RPC: its USDC (the network's own USDC contract
// or mint, 6 decimals) and its native coin (gas: ETH, POL, SOL). The RPC is the one named, else the sandbox
// chain a sandbox gateway reports in /healthz, else the network's public endpoint.
import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { base, baseSepolia, polygon, polygonAmoy } from 'viem/chains';
import { address as solanaAddress, createSolanaRpc } from '@solana/kit';
import { NETWORKS, type NetworkName } from '../x402/networks.ts';
import { gatewayHealth } from './health.ts';
import { SOLANA_PUBLIC_RPC } from './solana-rpc.ts';

const EVM_CHAINS = { base, polygon, 'base-sepolia': baseSepolia, 'polygon-amoy': polygonAmoy } as const;

export interface Balances {
  network: NetworkName;
  address: string;
  rpcUrl: string;
  /** USDC, atomic units (6 decimals) */
  usdc: bigint;
  /** the native coin in its smallest unit (wei, lamports) */
  native: bigint;
  nativeSymbol: string;
  nativeDecimals: number;
}

/** The RPC to read a network at: the one given, else the sandbox chain the gateway reports, else the public one. */
export async function balanceRpcUrl(network: NetworkName, options: { rpcUrl?: string; baseUrl: string; fetch?: typeof fetch }): Promise<string> {
  if (options.rpcUrl) return options.rpcUrl;
  const health = await gatewayHealth(options.baseUrl, options.fetch);
  const sandbox = health.sandboxRpcUrls[network];
  if (sandbox) return sandbox;
  if (health.sandbox) throw new Error(`the sandbox gateway at ${options.baseUrl} runs no ${network} chain (it runs: ${Object.keys(health.sandboxRpcUrls).join(', ')})`);
  return network in EVM_CHAINS ? EVM_CHAINS[network as keyof typeof EVM_CHAINS].rpcUrls.default.http[0] : SOLANA_PUBLIC_RPC[network]!;
}

export async function readBalances(network: NetworkName, owner: string, rpcUrl: string): Promise<Balances> {
  const facts = NETWORKS[network];
  if (facts.family === 'evm') {
    const chain = EVM_CHAINS[network as keyof typeof EVM_CHAINS];
    const client = createPublicClient({ chain, transport: http(rpcUrl, { retryCount: 0 }) });
    const [usdc, native] = await Promise.all([
      client.readContract({ address: facts.usdc as Address, abi: erc20Abi, functionName: 'balanceOf', args: [owner as Address] }),
      client.getBalance({ address: owner as Address }),
    ]);
    return { network, address: owner, rpcUrl, usdc, native, nativeSymbol: chain.nativeCurrency.symbol, nativeDecimals: chain.nativeCurrency.decimals };
  }
  const rpc = createSolanaRpc(rpcUrl);
  const [lamports, accounts] = await Promise.all([
    rpc.getBalance(solanaAddress(owner), { commitment: 'confirmed' }).send(),
    rpc.getTokenAccountsByOwner(solanaAddress(owner), { mint: solanaAddress(facts.usdc) }, { encoding: 'jsonParsed', commitment: 'confirmed' }).send(),
  ]);
  let usdc = 0n;
  for (const account of accounts.value) usdc += BigInt(account.account.data.parsed.info.tokenAmount.amount);
  return { network, address: owner, rpcUrl, usdc, native: lamports.value, nativeSymbol: 'SOL', nativeDecimals: 9 };
}
