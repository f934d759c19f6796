// Which Solana JSON-RPC the buyer builds its payment transaction against: the one the buyer names; else,
// only when the gateway's GET /healthz says it runs in sandbox mode, the sandbox chain it reports for the
// network (the public clusters cannot see sandbox chains); else the network's public endpoint.
import { DEVNET_RPC_URL, MAINNET_RPC_URL } from '@x402/svm';
import { gatewayHealth } from './health.ts';

/** the x402 v1 Solana networks a buyer can pay on, with their public RPC endpoints */
export const SOLANA_PUBLIC_RPC: Readonly<Record<string, string>> = {
  solana: MAINNET_RPC_URL,
  'solana-devnet': DEVNET_RPC_URL,
};

export const SOLANA_NETWORKS = Object.keys(SOLANA_PUBLIC_RPC);

export const isSolanaNetwork = (network: string): boolean => Object.hasOwn(SOLANA_PUBLIC_RPC, network);

/** The sandbox RPC URL per network that /healthz reports; empty when the gateway is not in sandbox mode. */
export async function sandboxRpcUrls(baseUrl: string, doFetch: typeof fetch = fetch): Promise<Record<string, string>> {
  return (await gatewayHealth(baseUrl, doFetch)).sandboxRpcUrls;
}

/** The RPC URL of each Solana network for this buyer: the one given, else the sandbox's, else the public one. */
export async function solanaRpcUrls(options: { baseUrl: string; rpcUrl?: string; fetch?: typeof fetch }): Promise<Record<string, string>> {
  const sandbox = options.rpcUrl ? {} : await sandboxRpcUrls(options.baseUrl, options.fetch);
  return Object.fromEntries(
    SOLANA_NETWORKS.map((network) => [network, options.rpcUrl ?? sandbox[network] ?? SOLANA_PUBLIC_RPC[network]!]),
  );
}
