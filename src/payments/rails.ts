// A payment rail: everything needed to take payment on one network — where the money goes,
// in which asset, and which facilitator verifies and settles it.
import type { Network, NetworkName } from '../x402/networks.ts';
import type { Facilitator } from './facilitator.ts';
import type { ChannelFacilitator } from './channels/channel-facilitator.ts';

/** A scheme beside `exact` on a rail, with the facilitator that takes it. */
export interface SchemeOffer {
  facilitator: Facilitator;
  /** added to the rail's `extra` in this scheme's requirement */
  extra: Record<string, unknown>;
  /** readiness: resolves while the scheme can still be paid here (its contracts have code; a remote still lists it), else throws why */
  check(): Promise<void>;
}

/** The `upto` scheme on a rail (EVM, where Permit2 and the upto proxy exist), for metered calls. */
export interface UptoOffer extends SchemeOffer {
  /** v2 `extensions` the 402 declares when this facilitator sponsors the payer's Permit2 approval */
  extensions: Record<string, unknown>;
}

/** Payment channels (x402 `batch-settlement`) on a rail (EVM, where the escrow exists), beside `exact`. */
export interface ChannelOffer {
  facilitator: ChannelFacilitator;
  /** the withdraw delay (seconds) channels to this server are opened with */
  withdrawDelay: number;
  /** added to the rail's `extra` (the token's EIP-712 name/version) in a batch-settlement requirement */
  extra: Record<string, unknown>;
  /** the 402's `extensions` entries channels need (Permit2 deposits: the EIP-2612 gas-sponsoring declaration) */
  extensions: Record<string, unknown>;
  /** readiness: resolves while channels can still be paid here, else throws why */
  check(): Promise<void>;
}

export interface PaymentRail {
  network: Network;
  payTo: string;
  asset: string;
  facilitator: Facilitator;
  /** requirement `extra` (EVM: EIP-712 name/version; Solana: feePayer), fixed at startup */
  extra: Record<string, unknown>;
  /** present where `upto` is offered beside `exact` */
  upto?: UptoOffer;
  /** present where payment channels (`batch-settlement`) are offered beside `exact` */
  channels?: ChannelOffer;
  /** present where `auth-capture` (Commerce Payments' escrow) is offered beside `exact` */
  authCapture?: SchemeOffer;
}

export type PaymentRails = ReadonlyMap<NetworkName, PaymentRail>;

/** The facilitator that verifies and settles `scheme` on this rail, if the rail takes that scheme. */
export function facilitatorFor(rail: PaymentRail, scheme: string): Facilitator | undefined {
  if (scheme === 'exact') return rail.facilitator;
  if (scheme === 'upto') return rail.upto?.facilitator;
  if (scheme === 'auth-capture') return rail.authCapture?.facilitator;
  return undefined;
}
