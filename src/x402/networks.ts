// The registry of networks this gateway knows, with the facts the protocol needs per network.
// Which of them are enabled, and where payments go, is the operator's config (src/config).

export type ChainFamily = 'evm' | 'svm';

interface NetworkBase {
  /** v1 network name, as carried in 402 bodies and X-PAYMENT payloads */
  name: NetworkName;
  /** CAIP-2 identifier (x402 v2) */
  caip2: string;
  testnet: boolean;
  /** USDC on this network (a contract address or a mint); 6 decimals everywhere */
  usdc: string;
  decimals: 6;
}

export interface EvmNetwork extends NetworkBase {
  family: 'evm';
  chainId: number;
  /** EIP-712 domain of the USDC contract; clients sign with it, so it must be exact */
  eip712: { name: string; version: string };
}

export interface SvmNetwork extends NetworkBase {
  family: 'svm';
}

export type Network = EvmNetwork | SvmNetwork;

export const NETWORK_NAMES = [
  'solana',
  'solana-devnet',
  'base',
  'polygon',
  'base-sepolia',
  'polygon-amoy',
] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];

export const NETWORKS: Readonly<Record<NetworkName, Network>> = {
  solana: {
    name: 'solana',
    family: 'svm',
    caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    testnet: false,
    usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    decimals: 6,
  },
  'solana-devnet': {
    name: 'solana-devnet',
    family: 'svm',
    caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    testnet: true,
    usdc: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    decimals: 6,
  },
  base: {
    name: 'base',
    family: 'evm',
    caip2: 'eip155:8453',
    chainId: 8453,
    testnet: false,
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    eip712: { name: 'USD Coin', version: '2' },
    decimals: 6,
  },
  polygon: {
    name: 'polygon',
    family: 'evm',
    caip2: 'eip155:137',
    chainId: 137,
    testnet: false,
    usdc: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
    eip712: { name: 'USD Coin', version: '2' },
    decimals: 6,
  },
  'base-sepolia': {
    name: 'base-sepolia',
    family: 'evm',
    caip2: 'eip155:84532',
    chainId: 84532,
    testnet: true,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    eip712: { name: 'USDC', version: '2' },
    decimals: 6,
  },
  'polygon-amoy': {
    name: 'polygon-amoy',
    family: 'evm',
    caip2: 'eip155:80002',
    chainId: 80002,
    testnet: true,
    usdc: '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582',
    eip712: { name: 'USDC', version: '2' },
    decimals: 6,
  },
};

export function isNetworkName(value: unknown): value is NetworkName {
  return typeof value === 'string' && (NETWORK_NAMES as readonly string[]).includes(value);
}

/** Accepts a v1 name or a CAIP-2 id (what v2 clients send) and returns the v1 name. */
export function resolveNetworkName(value: string): NetworkName | undefined {
  if (isNetworkName(value)) return value;
  return NETWORK_NAMES.find((name) => NETWORKS[name].caip2 === value);
}
