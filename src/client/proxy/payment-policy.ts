// Which of a 402's offers the proxy signs: only those on its network, to the allowed payee in the allowed asset;
// of those, the cheapest scheme first (payment channels: a voucher per call and no transaction; then `upto`: one
// transaction for what the call used; then `exact`: one transaction for the quote), unless --scheme forces one.
// The payee is --pay-to when given, else what the gateway's first 402 asked for on this network (kept in the spend
// file, so a restart does not learn it again); the asset is the network's USDC, the amount whole atomic units and
// the validity at most an hour (offer-terms.ts, as for the client library).
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import { offerProblem, sameAddress } from '../offer-terms.ts';
import type { Budget } from './budget.ts';
import { payeeKey } from './spend-state.ts';

export const SCHEMES = ['batch-settlement', 'upto', 'exact'] as const;
export type SchemeName = (typeof SCHEMES)[number];

/** --scheme's names: `channel` is batch-settlement */
export const SCHEME_FLAGS: Record<string, SchemeName> = { channel: 'batch-settlement', 'batch-settlement': 'batch-settlement', upto: 'upto', exact: 'exact' };

/** A 402 that asks for money to go somewhere the allowlist does not know: nothing is signed. */
export class PayeeRefused extends Error {
  override name = 'PayeeRefused';
}

export interface PolicyOptions {
  budget: Budget;
  /** the gateway's origin: payees are learned per gateway and network */
  gateway: string;
  network: NetworkName;
  /** --pay-to */
  payTo?: string;
  /** --scheme */
  scheme?: SchemeName;
  /** schemes this buyer can sign on the network (no channels or upto on Solana) */
  signable: readonly SchemeName[];
}

export class PaymentPolicy {
  readonly #options: PolicyOptions;
  readonly #caip2: string;

  constructor(options: PolicyOptions) {
    this.#options = options;
    this.#caip2 = NETWORKS[options.network].caip2;
  }

  /** The offers to try, best first; throws PayeeRefused when none goes to the allowed payee in the allowed asset. */
  offers(required: PaymentRequired): PaymentRequirements[] {
    const onNetwork = required.accepts.filter((offer) => offer.network === this.#caip2);
    if (onNetwork.length === 0) {
      throw new PayeeRefused(`the gateway asks for payment on ${required.accepts.map((offer) => offer.network).join(', ') || 'no network'}, not on ${this.#options.network} (${this.#caip2}); nothing was signed`);
    }
    const payTo = this.#payee(onNetwork[0]!);
    const toPayee = onNetwork.filter((offer) => sameAddress(offer.payTo, payTo));
    if (toPayee.length === 0) {
      throw new PayeeRefused(
        `the gateway asks to pay ${onNetwork[0]!.payTo}, but this proxy pays only ${payTo} on ${this.#options.network}` +
          `${this.#options.payTo ? ' (--pay-to)' : ' (the payee of its first 402, kept in the spend file; pass --pay-to to accept another)'}; nothing was signed`,
      );
    }
    const allowed = toPayee.filter((offer) => offerProblem(offer) === undefined);
    if (allowed.length === 0) throw new PayeeRefused(`the gateway's offer on ${this.#options.network} cannot be signed: ${offerProblem(toPayee[0]!)}; nothing was signed`);
    const order = this.#options.scheme ? [this.#options.scheme] : this.#options.signable;
    const ranked = order.flatMap((scheme) => allowed.filter((offer) => offer.scheme === scheme));
    if (ranked.length === 0) {
      throw new PayeeRefused(`the gateway offers ${allowed.map((offer) => offer.scheme).join(', ')} here, and this proxy pays by ${order.join(', ')}; nothing was signed`);
    }
    return ranked;
  }

  /** The payee allowed on this gateway and network: pinned, kept, or learned now from this offer. */
  #payee(first: PaymentRequirements): string {
    if (this.#options.payTo) return this.#options.payTo;
    const { budget, gateway, network } = this.#options;
    const key = payeeKey(gateway, network);
    const known = budget.refresh().payees.get(key);
    if (known) return known.payTo;
    budget.record({ kind: 'payee', gateway, network, payTo: first.payTo, asset: NETWORKS[network].usdc });
    return budget.state.payees.get(key)!.payTo;
  }
}
