// Whether two on-chain addresses name the same account: an EVM address (0x...) in any letter case (EIP-55 checksums
// only change case), any other (Solana's base58) exactly.
export function sameAddress(a: string, b: string): boolean {
  return a === b || (a.startsWith('0x') && a.toLowerCase() === b.toLowerCase());
}
