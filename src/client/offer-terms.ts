// What this library signs, whatever a gateway's 402 says: an offer on a network it knows, in that network's USDC,
// for a whole number of atomic units, valid for at most an hour, to the payee the buyer named if it named one. An
// offer naming another token, an amount like "1e3", "0.5" or "-1", or an authorization good for days is passed over;
// when no offer is left, nothing is signed.
import { NETWORKS, resolveNetworkName } from '../x402/networks.ts';
import { OfferRefusedError } from './errors.ts';

/** the longest validity (maxTimeoutSeconds) a signature is given */
export const MAX_VALIDITY_SECONDS = 3600;

/** an offer of either wire: v1 names `maxAmountRequired`, v2 `amount` */
export interface Offer {
  network: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  amount?: string;
  maxAmountRequired?: string;
}

const ATOMIC_UNITS = /^\d{1,30}$/;

export const sameAddress = (a: string, b: string): boolean => (a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b);

/** why this library will not sign the offer (to `payTo` only, when given); undefined when it may */
export function offerProblem(offer: Offer, payTo?: string): string | undefined {
  if (payTo !== undefined && (typeof offer.payTo !== 'string' || !sameAddress(offer.payTo, payTo))) return `it asks to pay ${JSON.stringify(offer.payTo)}, not ${payTo} (payTo)`;
  const name = resolveNetworkName(String(offer.network));
  if (!name) return `network ${JSON.stringify(offer.network)} is not one this client knows`;
  const usdc = NETWORKS[name].usdc;
  if (typeof offer.asset !== 'string' || !sameAddress(offer.asset, usdc)) return `it asks to be paid in ${JSON.stringify(offer.asset)}, not in USDC on ${name} (${usdc})`;
  const amount = offer.amount ?? offer.maxAmountRequired;
  if (typeof amount !== 'string' || !ATOMIC_UNITS.test(amount)) return `its amount ${JSON.stringify(amount)} is not a whole number of atomic units`;
  const validity = offer.maxTimeoutSeconds;
  if (!Number.isSafeInteger(validity) || validity <= 0 || validity > MAX_VALIDITY_SECONDS) {
    return `it asks for a signature valid for ${JSON.stringify(validity)} seconds (at most ${MAX_VALIDITY_SECONDS} are signed)`;
  }
  return undefined;
}

/** The offers this library may sign, in the gateway's order; OfferRefusedError, naming why, when there are none. */
export function signableOffers<T extends Offer>(offers: T[], network: string, payTo?: string): T[] {
  const signable = offers.filter((offer) => offerProblem(offer, payTo) === undefined);
  if (signable.length === 0 && offers.length > 0) {
    throw new OfferRefusedError(`the gateway's offer on ${network} cannot be signed: ${offerProblem(offers[0]!, payTo)}; nothing was signed`);
  }
  return signable;
}

/** The price of an offer that passed offerProblem, in atomic units. */
export const offerAmount = (offer: Offer): bigint => BigInt(offer.amount ?? offer.maxAmountRequired!);
