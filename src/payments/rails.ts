// A payment rail: everything needed to take payment on one network — where the money goes,
// in which asset, and which facilitator verifies and settles it.
import type { Network, NetworkName } from '../x402/networks.ts';
import type { Facilitator } from './facilitator.ts';

export interface PaymentRail {
  network: Network;
  payTo: string;
  asset: string;
  facilitator: Facilitator;
  /** requirement `extra` (EVM: EIP-712 name/version; Solana: feePayer), fixed at startup */
  extra: Record<string, unknown>;
}

export type PaymentRails = ReadonlyMap<NetworkName, PaymentRail>;
