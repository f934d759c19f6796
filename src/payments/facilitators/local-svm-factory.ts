// Placeholder until the local Solana facilitator lands: configuring a local Solana facilitator fails loudly.
import type { Facilitator } from '../facilitator.ts';
import type { SvmNetwork, Network } from '../../x402/networks.ts';
import { ConfigError } from '../../config/load.ts';

export function createLocalSvmFacilitator(options: {
  network: Network;
  rpcUrl: string;
  secretKey: string;
  asset: string;
  confirmTimeoutMs: number;
}): Facilitator {
  const network = options.network as SvmNetwork;
  throw new ConfigError(`a local facilitator for ${network.name} is not available in this build; use a remote facilitator`);
}
