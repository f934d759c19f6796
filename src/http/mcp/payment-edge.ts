// The MCP wire edge of the payment core (x402's MCP transport): the PaymentPayload object of
// `_meta["x402/payment"]` in, the core's outcome out as the objects MCP payment clients read (the v2
// PaymentRequired, the SettleResponse). The same core as HTTP's: the one call builder (payments/paid-call.ts), one
// ledger, the one PaymentRequired (PaymentGate.paymentRequired, a channel's state included), the same traces and
// metrics (paid/observed-call.ts); only the documents' carrier differs.
import type { PreparedCall } from '../../api/endpoint.ts';
import type { Config } from '../../config/load.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import type { PaymentGate } from '../../payments/gate.ts';
import type { ReceivedPayment, WireNames } from '../../payments/outcome.ts';
import type { SettlementReceipt } from '../../x402/model.ts';
import { paidCall } from '../../payments/paid-call.ts';
import { ApiError } from '../../errors.ts';
import { paymentIdOf, v2PaymentRequired, v2ProofFromPayload, v2SettleResponse, type V2PaymentRequired } from '../../x402/v2/codec.ts';
import { outcomeError, type OutcomeError } from '../paid/payment-edge.ts';
import { countedWork, traced, traceOutcome, type ObservedDeps } from '../paid/observed-call.ts';
import { toolResource, type PaidTool } from './tools.ts';

export const PAYMENT_META = 'x402/payment';
/** the x402 MCP transport's extension binding (2026-07-28): a `payment_required` result instead of an error-shaped one */
export const PAYMENT_EXTENSION = 'org.x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
/** how MCP clients are told where their payment goes, in the reasons given back */
const PAYMENT_FIELD = `_meta["${PAYMENT_META}"]`;

const MCP_NAMES: WireNames = {
  noPayment: `payment required: call again with a PaymentPayload in ${PAYMENT_FIELD}`,
  network: 'network argument',
  networkField: 'network',
  noNetwork: 'no network argument was given',
  payment: PAYMENT_FIELD,
  sameAgain: `the SAME tool input and ${PAYMENT_FIELD}`,
};

/** The x402 v2 SettleResponse as `_meta["x402/payment-response"]` carries it. */
export type SettleResponse = Record<string, unknown>;

/** What became of a paid tool call. */
export type ToolPayment =
  | {
      kind: 'delivered';
      body: unknown;
      charged: bigint;
      usage: Partial<TokenUsage> | undefined;
      receipt: SettleResponse;
      /** the media ids of the body, and the payment they are read back under (as GET /api/v1/payments/:id names it) */
      media: { ids: string[]; payment: string | undefined };
    }
  /** no payment, or one that was refused (its reason in `required.error`); `receipt`: the settlement that failed */
  | { kind: 'payment_required'; required: V2PaymentRequired; receipt?: SettleResponse }
  /** anything else: a settlement still pending (the same payment, sent again, gets the result), a refusal */
  | { kind: 'error'; error: OutcomeError };

export interface McpPaymentDeps extends ObservedDeps {
  config: Config;
  gate: PaymentGate;
}

export interface PaidToolCall {
  tool: PaidTool;
  /** the tool's input as its route's prepared call */
  prepared: PreparedCall;
  /** the tool's v2 `extensions` (bazaar's MCP form, payment-identifier) */
  extensions: Record<string, unknown>;
  /** the tool input exactly as called: a proof is honoured only for the input it paid */
  input: unknown;
  /** `_meta["x402/payment"]` as received (a v2 PaymentPayload object when well formed); undefined when absent */
  payment: unknown;
  /** the network the caller asked to pay on (the tool's `network` argument), like X-Network */
  network: string | undefined;
}

/** `_meta["x402/payment"]` as the core's payment, or why it is not one. */
export function paymentFromMeta(value: unknown): ReceivedPayment | string {
  const v2 = v2ProofFromPayload(value, PAYMENT_FIELD);
  if (typeof v2 === 'string') return v2;
  const id = paymentIdOf(v2.extensions);
  if (typeof id === 'object') throw new ApiError(400, 'invalid_request', id.invalid, { field: PAYMENT_FIELD });
  return { proof: v2.proof, wires: [2], accepted: v2.accepted, source: PAYMENT_FIELD, ...(id === undefined ? {} : { paymentId: id }) };
}

/** A paid tool call through the gate, traced and metered as an HTTP call is. */
export function payForTool(deps: McpPaymentDeps, call: PaidToolCall): Promise<ToolPayment> {
  const { operation } = call.tool;
  const payment = call.payment === undefined ? undefined : paymentFromMeta(call.payment);
  const resource = toolResource(call.tool.name);
  const statusOf = (answer: ToolPayment) => (answer.kind === 'delivered' ? 200 : answer.kind === 'payment_required' ? 402 : answer.error.status);
  return traced(deps, { capability: operation.capability, route: resource, prepared: call.prepared, paid: payment !== undefined }, async (): Promise<ToolPayment> => {
    const work = countedWork(deps, operation.capability, call.prepared.model.id);
    const { service } = deps.config;
    const paid = paidCall(
      deps.config,
      operation,
      {
        payment,
        network: call.network,
        names: MCP_NAMES,
        resource,
        listing: { serviceName: service.name, tags: service.tags, extensions: call.extensions },
        // binds a proof to this tool and this exact input
        binding: { route: resource, body: call.input },
      },
      { model: call.prepared.model.id, amount: call.prepared.amount, payer: call.prepared.payer, paidBy: call.prepared.paidBy, work: () => work.count(() => call.prepared.run()) },
    );
    const outcome = await deps.gate.process(paid);
    traceOutcome(outcome);
    switch (outcome.kind) {
      case 'delivered':
        return {
          kind: 'delivered',
          body: outcome.body,
          charged: outcome.receipt.amount ?? call.prepared.amount,
          usage: work.usage() ?? call.tool.route.usageOf?.(outcome.body),
          receipt: v2SettleResponse(outcome.receipt),
          media: { ids: outcome.media, payment: paymentIdOfReceipt(outcome.receipt) },
        };
      case 'payment_required':
        return {
          kind: 'payment_required',
          required: v2PaymentRequired(deps.gate.paymentRequired(paid, outcome)),
          ...(outcome.failed ? { receipt: v2SettleResponse(outcome.failed.receipt) } : {}),
        };
      default:
        return { kind: 'error', error: outcomeError(outcome, paid) };
    }
  }, statusOf);
}

/** A delivered payment's id for GET /api/v1/payments/:id: its transaction, or (a payment channel's charge) the channel. */
function paymentIdOfReceipt(receipt: SettlementReceipt): string | undefined {
  const channel = (receipt.extra?.channelState as { channelId?: unknown } | undefined)?.channelId;
  return typeof channel === 'string' ? channel : receipt.transaction || undefined;
}
