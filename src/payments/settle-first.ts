// Which paid calls settle BEFORE their work runs (config.settleFirst). A rule names a capability ("image":
// every network), a network ("solana": every capability), or both ("solana:image"). Settling first suits
// long work against a short-lived proof, above all a Solana transaction, whose blockhash expires about a
// minute after the buyer signed it; elsewhere the default settles only after the result is stored.
import type { NetworkName } from '../x402/networks.ts';

export function settlesFirst(rules: readonly string[], network: NetworkName, capability: string): boolean {
  return rules.some((rule) => rule === capability || rule === network || rule === `${network}:${capability}`);
}
