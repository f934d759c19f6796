// A payment rail: everything needed to take payment on one network — where the money goes,
// in which asset, and which facilitator verifies and settles it.
import type { Network, NetworkName } from '../x402/networks.ts';
import type { Facilitator } from './facilitator.ts';
import type { ChannelFacilitator } from './channels/channel-facilitator.ts';
import { AUTH_CAPTURE_SCHEME } from '../x402/auth-capture.ts';
import { BATCH_SETTLEMENT_SCHEME } from '../x402/batch-settlement.ts';

/** A scheme beside `exact` on a rail, with the facilitator that takes it. */
export interface SchemeOffer {
  facilitator: Facilitator;
  /** added to the rail's `extra` in this scheme's requirement */
  extra: Record<string, unknown>;
  /** v2 `extensions` a 402 offering this scheme declares */
  extensions?: Record<string, unknown>;
  /** readiness: resolves while the scheme can still be paid here (its contracts have code; a remote still lists it), else throws why */
  check(): Promise<void>;
}

/** The `upto` scheme on a rail (EVM, where Permit2 and the upto proxy exist), for metered calls. */
export interface UptoOffer extends SchemeOffer {
  /** the 402 declares the gas sponsoring of the payer's Permit2 approval when this facilitator pays for it */
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

/**
 * The schemes a rail may offer beside `exact`, in the order a 402 lists them: each one's wire name, its name in
 * /readyz's `degraded`, the rail's offer of it (absent where the rail does not take it), and the facilitator that
 * verifies and settles it. Payment channels have none of that kind: their facilitator is the channel gate's
 * (channels/channel-gate.ts).
 */
export const SCHEMES_BESIDE_EXACT = [
  { scheme: 'upto', label: 'upto', offerOf: (rail: PaymentRail): UptoOffer | undefined => rail.upto, facilitatorOf: (rail: PaymentRail) => rail.upto?.facilitator },
  { scheme: BATCH_SETTLEMENT_SCHEME, label: 'channels', offerOf: (rail: PaymentRail): ChannelOffer | undefined => rail.channels, facilitatorOf: () => undefined },
  {
    scheme: AUTH_CAPTURE_SCHEME,
    label: 'auth-capture',
    offerOf: (rail: PaymentRail): SchemeOffer | undefined => rail.authCapture,
    facilitatorOf: (rail: PaymentRail) => rail.authCapture?.facilitator,
  },
] as const;

/** The rail's offer of `scheme` beside `exact`, if it takes it. */
export function offerOf(rail: PaymentRail, scheme: string): UptoOffer | ChannelOffer | SchemeOffer | undefined {
  return besideExact(scheme)?.offerOf(rail);
}

/** The facilitator that verifies and settles `scheme` on this rail, if the rail takes that scheme (not channels: above). */
export function facilitatorFor(rail: PaymentRail, scheme: string): Facilitator | undefined {
  return scheme === 'exact' ? rail.facilitator : besideExact(scheme)?.facilitatorOf(rail);
}

const besideExact = (scheme: string) => SCHEMES_BESIDE_EXACT.find((beside) => beside.scheme === scheme);
