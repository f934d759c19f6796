// The JSON-RPC client every local EVM facilitator reads and sends through: one chain definition, and JSON-RPC
// over pooled keep-alive node:http connections (rpc-fetch.ts), as the upstream AI calls go.
import { createPublicClient, defineChain, http, type Chain, type PublicClient, type Transport } from 'viem';
import type { EvmNetwork } from '../../../x402/networks.ts';
import { rpcFetch } from '../rpc-fetch.ts';

export function evmChainClient(network: EvmNetwork, rpcUrl: string, pollingIntervalMs: number): PublicClient<Transport, Chain> {
  const chain = defineChain({
    id: network.chainId,
    name: network.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createPublicClient({ chain, transport: http(rpcUrl, { fetchFn: rpcFetch }), pollingInterval: pollingIntervalMs });
}
