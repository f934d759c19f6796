// Signs a payment for a 402 within the caps, whatever carries it (an HTTP header, MCP's `_meta`): the policy
// picks the offer, the budget holds its ceiling (nothing is signed past a cap), the scheme's official client signs,
// and the attempt then tells the budget (and the channel's client) what the gateway did with it.
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { CapExceeded, type Budget, type ChargeFacts } from './budget.ts';
import type { ChannelLanes, ChannelPayment } from './channel-lanes.ts';
import { chainProofOf, type ChainOutcomes } from './chain-outcomes.ts';
import type { PaymentPolicy, SchemeName } from './payment-policy.ts';
import { chargeOf, type Receipt } from './receipts.ts';
import type { NetworkName } from '../../x402/networks.ts';

/** payments signed for one call at most: the first, then a resynchronised channel's or a changed price's */
export const MAX_PAYMENTS_PER_CALL = 3;
/** a settlement still pending is asked about again with the same payment this many times (a second apart at least) */
export const PENDING_RETRIES = 20;

/** A signed payment on its way: what became of it is told once. */
export interface Attempt {
  scheme: SchemeName;
  requirement: PaymentRequirements;
  /** the x402 v2 PaymentPayload (MCP carries it as is, HTTP base64 in PAYMENT-SIGNATURE) */
  payload: PaymentPayload;
  /** the gateway delivered: what it charged (the hold corrected to it) */
  delivered(receipt: Receipt, facts?: ChargeFacts): Promise<bigint>;
  /** the gateway answered 402 instead (nothing charged): true when signing again may succeed (a resynchronised channel) */
  refused(required?: PaymentRequired): Promise<boolean>;
  /** the work failed: `known`, the gateway said nothing was charged; else the outcome is unknown and the hold stays */
  failed(known: boolean): Promise<void>;
}

export interface PayerOptions {
  budget: Budget;
  policy: PaymentPolicy;
  network: NetworkName;
  /** payment channels (EVM networks) */
  lanes?: ChannelLanes;
  /** the official client of each other scheme the buyer signs on this network */
  clients: Partial<Record<Exclude<SchemeName, 'batch-settlement'>, SchemeNetworkClient>>;
  /** what the chain says of payments whose outcome was not seen */
  outcomes?: ChainOutcomes;
}

export class Payer {
  readonly #options: PayerOptions;
  /**
   * upto payments go one at a time, from signing to their outcome: each signs its own allowance for Permit2 (the
   * official client's permit, one nonce), which one signed in parallel would spend first
   */
  #uptoTail: Promise<void> = Promise.resolve();

  constructor(options: PayerOptions) {
    this.#options = options;
  }

  /**
   * A payment for `required`, by the cheapest scheme offered that can be signed. Throws CapExceeded (nothing
   * signed) or PayeeRefused; a scheme whose client fails to sign (an RPC down) gives way to the next.
   */
  async pay(required: PaymentRequired, surface: string): Promise<Attempt> {
    const { budget, network } = this.#options;
    let lastError: unknown;
    for (const offer of this.#options.policy.offers(required)) {
      const scheme = offer.scheme as SchemeName;
      const hold = await this.#hold(BigInt(offer.amount), { scheme, network, surface }, scheme !== 'batch-settlement');
      try {
        return await this.#sign(required, offer, scheme, hold);
      } catch (error) {
        budget.released(hold);
        if (error instanceof CapExceeded) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }

  /** The budget's hold; past a cap while earlier payments' outcomes are unknown, the chain is asked first. */
  async #hold(...args: Parameters<Budget['hold']>): Promise<string> {
    const { budget, outcomes } = this.#options;
    try {
      return budget.hold(...args);
    } catch (error) {
      if (!(error instanceof CapExceeded && outcomes?.waiting)) throw error;
      await outcomes.settle();
      return budget.hold(...args);
    }
  }

  /** Waits for the upto payment before this one to end; resolves to what ends this one's turn. */
  async #uptoTurn(): Promise<() => void> {
    let end!: () => void;
    const previous = this.#uptoTail;
    this.#uptoTail = new Promise<void>((resolve) => (end = resolve));
    await previous;
    return end;
  }

  async #sign(required: PaymentRequired, offer: PaymentRequirements, scheme: SchemeName, hold: string): Promise<Attempt> {
    const endTurn = scheme === 'upto' ? await this.#uptoTurn() : undefined;
    try {
      return this.#told(await this.#signed(required, offer, scheme, hold), endTurn);
    } catch (error) {
      endTurn?.();
      throw error;
    }
  }

  /** `attempt`, calling `after` once its outcome is told */
  #told(attempt: Attempt, after: (() => void) | undefined): Attempt {
    if (!after) return attempt;
    const then = <T>(told: Promise<T>) => told.finally(after);
    return {
      ...attempt,
      delivered: (receipt, facts) => then(attempt.delivered(receipt, facts)),
      refused: (corrective) => then(attempt.refused(corrective)),
      failed: (known) => then(attempt.failed(known)),
    };
  }

  /** A payment whose outcome was not seen: the chain is asked what became of it, now and later (chain-outcomes.ts). */
  #unknownOutcome(hold: string, scheme: SchemeName, offer: PaymentRequirements, payload: PaymentPayload, signedAt: number): void {
    const { budget, outcomes, network } = this.#options;
    const proof = outcomes && chainProofOf(network, scheme, offer, payload.payload, signedAt);
    if (!proof) return;
    budget.record({ kind: 'unknown', id: hold, proof });
    void outcomes.settle();
  }

  async #signed(required: PaymentRequired, offer: PaymentRequirements, scheme: SchemeName, hold: string): Promise<Attempt> {
    const { budget } = this.#options;
    let channel: ChannelPayment | undefined;
    let payload: PaymentPayload;
    const signedAt = Date.now();
    const envelope = { x402Version: 2, accepted: offer, ...(required.resource ? { resource: required.resource } : {}) };
    if (scheme === 'batch-settlement') {
      if (!this.#options.lanes) throw new Error('payment channels need an EVM key');
      channel = await this.#options.lanes.pay(offer, hold);
      payload = { ...envelope, payload: channel.payload } as PaymentPayload;
    } else {
      const client = this.#options.clients[scheme];
      if (!client) throw new Error(`no ${scheme} client for this network`);
      // the 402's extensions go in for the scheme to read (gas sponsoring); only its own come back out
      const signed = await client.createPaymentPayload(2, offer, { extensions: required.extensions ?? {} });
      payload = { ...envelope, payload: signed.payload, ...(signed.extensions ? { extensions: signed.extensions } : {}) } as PaymentPayload;
    }
    const unknownOutcome = () => (channel ? undefined : this.#unknownOutcome(hold, scheme, offer, payload, signedAt));
    let told = false;
    const once = () => {
      if (told) throw new Error('a payment attempt is told its outcome once');
      told = true;
    };
    return {
      scheme,
      requirement: offer,
      payload,
      async delivered(receipt, facts = {}) {
        once();
        const charged = chargeOf(scheme, receipt, offer);
        budget.charged(hold, charged, facts);
        try {
          await channel?.delivered(receipt, charged);
        } finally {
          channel?.done();
        }
        return charged;
      },
      async refused(corrective) {
        once();
        budget.released(hold);
        try {
          return (await channel?.refused(corrective)) ?? false;
        } finally {
          channel?.done();
        }
      },
      async failed(known) {
        once();
        if (known) budget.released(hold);
        else unknownOutcome();
        try {
          await channel?.failed(known);
        } finally {
          channel?.done();
        }
      },
    };
  }
}
