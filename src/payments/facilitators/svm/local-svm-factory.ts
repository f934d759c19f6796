// The local Solana facilitator for a configured network: our RPC, our fee payer from a secret
// (a Solana CLI JSON array or base58), the configured mint.
import type { Facilitator } from '../../facilitator.ts';
import type { Network, SvmNetwork } from '../../../x402/networks.ts';
import { ConfigError } from '../../../config/load.ts';
import { LocalSvmFacilitator, parseSvmSecretKey } from './local-svm.ts';

export function createLocalSvmFacilitator(options: {
  network: Network;
  rpcUrl: string;
  secretKey: string;
  asset: string;
  confirmTimeoutMs: number;
}): Facilitator {
  let feePayer: Uint8Array;
  try {
    feePayer = parseSvmSecretKey(options.secretKey);
  } catch (error) {
    throw new ConfigError(`the ${options.network.name} fee-payer secret is not a Solana keypair: ${(error as Error).message}`);
  }
  return new LocalSvmFacilitator({
    network: options.network as SvmNetwork,
    rpcUrl: options.rpcUrl,
    feePayer,
    asset: options.asset,
    confirmTimeoutMs: options.confirmTimeoutMs,
  });
}
