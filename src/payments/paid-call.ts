// The one place a paid call is made: an operation's terms and one request's facts become the core's PaidCall,
// whichever transport the request came on (an HTTP route, a refund on a paid URL, an MCP tool). Each wire edge
// only decodes its payment and names; the rules of a call (its timeout, when it settles, what its proof is bound
// to, what a refund may take) are here once.
import type { Config } from '../config/load.ts';
import type { Capability } from '../config/schema.ts';
import { requestHash } from '../lib/canonical-json.ts';
import { settlesFirst } from './settle-first.ts';
import type { Listing, PaidCall, ReceivedPayment, SchemeName, WireNames } from './outcome.ts';

/** What a paid operation is, as the core needs it: fixed for each operation. */
export interface OperationTerms {
  capability: Capability;
  /** names the operation in every payment-required answer */
  description: string;
  /** the price is a ceiling, the result's cost is charged */
  metered: boolean;
  schemes: readonly SchemeName[];
}

/** What one request says of its payment, as its wire edge read it. */
export interface RequestFacts {
  payment: ReceivedPayment | string | undefined;
  /** the network the client asked to pay on, as it spelled it */
  network: string | undefined;
  names: WireNames;
  /** the absolute URL (or URI) paid for */
  resource: string;
  listing: Listing;
  /** what a proof is bound to: the route (its path, or a tool's resource) and the body exactly as sent */
  binding: { route: string; body: unknown };
}

/** The work a paid call buys: its model, its price, and how long a stream of it may run. */
export interface PricedWork {
  model: string;
  amount: bigint;
  /** a stream: how long the work may still produce output once started (see stream-validity.ts) */
  streamSeconds?: number | undefined;
  /** the one payer who may pay for it (PaidCall.payer) */
  payer?: string | undefined;
  paidBy?: PaidCall['paidBy'] | undefined;
  work: PaidCall['work'];
}

/**
 * The nominal per-request amount of a refund's offer: a refund charges nothing and its voucher signs what was
 * charged already, so the amount only has to be the same in the probe's offer and the refund's `accepted`.
 */
export const REFUND_OFFER_AMOUNT = 1n;

/** How long a refund's payment-required answer lets its voucher be signed. */
const REFUND_TIMEOUT_SECONDS = 300;

type CallConfig = Pick<Config, 'maxTimeoutSeconds' | 'settleFirst'>;

/** A call that buys `priced` work. */
export function paidCall(config: CallConfig, terms: OperationTerms, facts: RequestFacts, priced: PricedWork): PaidCall {
  return {
    ...common(terms, facts),
    model: priced.model,
    amount: priced.amount,
    maxTimeoutSeconds: config.maxTimeoutSeconds[terms.capability],
    // only a paid call needs to identify its body
    requestHash: facts.payment === undefined ? '' : requestHash(facts.binding.route, facts.binding.body),
    settleFirst: (network) => settlesFirst(config.settleFirst, network, terms.capability),
    metered: terms.metered,
    ...(priced.streamSeconds === undefined ? {} : { streamSeconds: priced.streamSeconds }),
    ...(priced.payer === undefined ? {} : { payer: priced.payer }),
    ...(priced.paidBy === undefined ? {} : { paidBy: priced.paidBy }),
    work: priced.work,
  };
}

/**
 * A payment channel's cooperative refund on an operation's URL (x402 batch-settlement): no work runs, and the
 * gate takes nothing but a refund here.
 */
export function refundCall(terms: OperationTerms, facts: RequestFacts): PaidCall {
  return {
    ...common(terms, facts),
    model: '',
    amount: REFUND_OFFER_AMOUNT,
    maxTimeoutSeconds: REFUND_TIMEOUT_SECONDS,
    requestHash: '',
    settleFirst: () => false,
    refundOnly: true,
    work: () => Promise.reject(new Error('a refund runs no work')),
  };
}

function common(terms: OperationTerms, facts: RequestFacts): Pick<PaidCall, 'payment' | 'network' | 'names' | 'resource' | 'listing' | 'description' | 'schemes'> {
  return {
    payment: facts.payment,
    network: facts.network,
    names: facts.names,
    resource: facts.resource,
    listing: facts.listing,
    description: terms.description,
    schemes: terms.schemes,
  };
}
