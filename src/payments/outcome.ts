// What goes into the payment core and what comes out of it, in the internal model only: no header, no status
// code, no wire document. A wire edge (src/http/paid/payment-edge.ts for HTTP headers, src/http/mcp/ for JSON-RPC `_meta`)
// reads a proof into a `ReceivedPayment` and renders a `PaymentOutcome` into its own documents.
import { sameAddress } from '../lib/same-address.ts';
import type { NetworkName } from '../x402/networks.ts';
import type { DecodedProof, PaymentRequirement, SettlementReceipt, Wire } from '../x402/model.ts';
import type { PaymentRail } from './rails.ts';

/** A proof as a wire edge read it: the payment, the wires to answer on, and (v2) what the client says it accepted. */
export interface ReceivedPayment {
  proof: DecodedProof;
  /** every protocol version that carried it: the receipt is given on each */
  wires: Wire[];
  /** v2: the requirement the client says it accepted (checked against the server's own) */
  accepted?: Pick<PaymentRequirement, 'scheme' | 'amount' | 'asset' | 'payTo'>;
  /** v2 payment-identifier extension: the client's id for this payment */
  paymentId?: string;
  /** what carried it, as the client knows it (HTTP: the header's name), for the reasons given back */
  source: string;
}

/** How a wire names what its client sends, for the reasons given back (HTTP: header names). */
export interface WireNames {
  /** the reason of a 402 answering a call that carried no payment */
  noPayment: string;
  /** the client's choice of network, in the reasons given back */
  network: string;
  /** the field that carries it, for a refusal's `field` */
  networkField: string;
  /** where a payment is sent, for a refusal's `field` when the payment could not be read */
  payment: string;
  /** the reason part of a 402 to a call that chose no network */
  noNetwork: string;
  /** what to send again to get a result whose settlement is not confirmed yet */
  sameAgain: string;
}

/** The x402 schemes an operation may be paid with (each offered where a rail has it). */
export type SchemeName = 'exact' | 'upto' | 'batch-settlement' | 'auth-capture';

/** What a payment-required answer says of the operation beside its offers. */
export interface Listing {
  serviceName?: string | undefined;
  tags?: string[] | undefined;
  /** the operation's v2 `extensions` (bazaar, payment-identifier), fixed per route and origin */
  extensions: Record<string, unknown>;
}

/** One call to a paid operation, whichever wire it came on. */
export interface PaidCall {
  /** the payment sent: absent when none was, a string when one was sent but could not be read (why) */
  payment?: ReceivedPayment | string | undefined;
  /** the network the client asked to pay on (HTTP: X-Network), as it spelled it; untrusted */
  network?: string | undefined;
  names: WireNames;
  /** absolute URL (or URI) of the paid operation */
  resource: string;
  /** what a payment-required answer says of the operation beside its offers */
  listing: Listing;
  /** the schemes offered for this operation, where a rail has them (`exact` on every rail) */
  schemes: readonly SchemeName[];
  /** id of the model the call runs, recorded on the payment (revenue by model) */
  model: string;
  description: string;
  amount: bigint;
  maxTimeoutSeconds: number;
  /** identifies the request, so a proof is honoured only for the request it paid for */
  requestHash: string;
  /** whether to settle before running the work on this network (see settle-first.ts) */
  settleFirst: (network: NetworkName) => boolean;
  /** The price is a ceiling and the work reports its actual cost, which `upto` and payment channels charge. */
  metered?: boolean;
  /**
   * How long the work may still produce output after it starts (a stream), in seconds: a payment that
   * expires sooner could not be settled once the answer is out (see stream-validity.ts). Absent: the work
   * delivers nothing before it resolves, so any validity will do.
   */
  streamSeconds?: number;
  /**
   * The call carries nothing but a payment channel's cooperative refund (x402 batch-settlement: the official
   * client's GET to a paid route's URL): any other payment is refused, and `work` never runs.
   */
  refundOnly?: boolean;
  /**
   * The one payer who may pay for this call: a call that goes on from state another paid call left (a Responses
   * `previous_response_id`) is its payer's alone. A payment that verifies from anyone else is refused
   * (`payer_not_allowed`) before anything is charged or run.
   */
  payer?: string;
  /** told who pays, once the payment verified and right before the work runs (runWork): what the work leaves is theirs */
  paidBy?: (payer: string) => void;
  work: (payment: WorkPayment) => Promise<WorkResult>;
}

/** Runs a call's work for a verified payment, telling the call who pays first. */
export function runWork(call: PaidCall, payment: WorkPayment): Promise<WorkResult> {
  call.paidBy?.(payment.payer);
  return call.work(payment);
}

/** What the work is told of its payment when it starts (a stream states it in its headers). */
export interface WorkPayment {
  /** who pays, as the payment verified */
  payer: string;
  /** what the payer is charged, when known before the work runs; absent under `upto`, where the result's cost decides */
  charge?: bigint;
  /**
   * `upto`, streamed: when the stream must stop (ms since the epoch) for the payment to settle still; it then ends
   * as if its token limit were reached, and what was delivered is charged (stream-validity.ts)
   */
  deadline?: number;
}

export interface WorkResult {
  body: unknown;
  /** media ids the body refers to */
  media: string[];
  /** metered calls: what the result costs, at most the quote (absent: the quote) */
  cost?: bigint;
}

/** Why a payment is refused without a 402: named reasons a wire edge maps to its own answers. */
export type RefusalCode =
  | 'unsupported_network'
  | 'network_mismatch'
  | 'payment_id_conflict'
  | 'payer_not_allowed'
  | 'payment_in_progress'
  | 'payment_attempts_exhausted'
  | 'facilitator_unavailable';

export type PaymentOutcome =
  /** the work's result, paid (or replayed to its payer); `receipt.amount` is what was charged */
  | { kind: 'delivered'; status: number; body: unknown; media: string[]; receipt: SettlementReceipt; wires: Wire[] }
  /** pay (again): the reason, and the rails to offer; a settlement that failed also gives its receipt */
  | {
      kind: 'payment_required';
      reason: string;
      rails: readonly PaymentRail[];
      failed?: { receipt: SettlementReceipt; wires: Wire[] };
      /** fields merged into the `extra` of one offer (batch-settlement's corrective 402: the channel's state) */
      amend?: OfferAmendment;
    }
  /** sent but not confirmed: the same proof gets the result once it is; never "pay again" */
  | { kind: 'pending'; transaction: string | null }
  | {
      kind: 'refused';
      code: RefusalCode;
      message: string;
      /** what of the call is at fault: the network choice or the payment (a wire names it its own way) */
      subject?: 'network' | 'payment';
      /** a settled payment's transaction, for the refund it is owed */
      transaction?: string | null;
      retryAfterSeconds?: number;
    };

export type Refusal = Extract<PaymentOutcome, { kind: 'refused' }>;

/** Whether `payer` may pay for `call`: anyone, unless the call is bound to one payer. */
export function payerAllowed(call: Pick<PaidCall, 'payer'>, payer: string): boolean {
  return call.payer === undefined || sameAddress(call.payer, payer);
}

/** A payment from another payer than the call is bound to: nothing was charged. */
export const PAYER_NOT_ALLOWED: Refusal = {
  kind: 'refused',
  code: 'payer_not_allowed',
  subject: 'payment',
  message: 'this call goes on from a result another payer paid for: only that payer may pay for it; nothing was charged',
};

/** The facilitator did not answer (verification or settlement could not be asked): nothing was charged. */
export const FACILITATOR_UNAVAILABLE: Refusal = {
  kind: 'refused',
  code: 'facilitator_unavailable',
  message: 'the payment facilitator is unavailable; nothing was charged, retry later',
  retryAfterSeconds: 5,
};

/** Extra fields for the offer of `scheme` on `network` in one payment-required answer (never cached). */
export interface OfferAmendment {
  scheme: string;
  network: NetworkName;
  extra: Record<string, unknown>;
}
