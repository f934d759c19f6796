// Where a person can look a settlement up. Sandbox chains have no explorer: the RPC URL in /healthz is the way.
const EXPLORERS: Record<string, string> = {
  base: 'https://basescan.org/tx/',
  'base-sepolia': 'https://sepolia.basescan.org/tx/',
  polygon: 'https://polygonscan.com/tx/',
  'polygon-amoy': 'https://amoy.polygonscan.com/tx/',
  solana: 'https://explorer.solana.com/tx/',
  'solana-devnet': 'https://explorer.solana.com/tx/?cluster=devnet',
};

export function transactionLink(network: string, transaction: string): string | undefined {
  const base = EXPLORERS[network];
  if (!base || !transaction) return undefined;
  return base.includes('?') ? base.replace('?', `${transaction}?`) : `${base}${transaction}`;
}
