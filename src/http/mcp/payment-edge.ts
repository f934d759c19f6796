// The MCP wire edge of the payment core (x402's MCP transport): the PaymentPayload object of
// `_meta["x402/payment"]` in, the core's outcome out as the objects MCP payment clients read (the v2
// PaymentRequired, the SettleResponse). The same core as HTTP's (payments/gate.ts): one ledger, one set of
// requirements, the same rules; only the documents' carrier differs.
import type { WorkOutput } from '../../api/endpoint.ts';
import type { Config } from '../../config/load.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import type { PaymentGate } from '../../payments/gate.ts';
import type { PaidCall, PaymentOutcome, ReceivedPayment, WireNames } from '../../payments/outcome.ts';
import type { SettlementReceipt } from '../../x402/model.ts';
import { settlesFirst } from '../../payments/settle-first.ts';
import { ApiError } from '../../errors.ts';
import { requestHash } from '../../lib/canonical-json.ts';
import { paymentIdOf, v2PaymentRequired, v2ProofFromPayload, v2SettleResponse, type V2PaymentRequired } from '../../x402/v2/codec.ts';
import { amendedOffers, refusalError, v2ResourceOf } from '../payment-edge.ts';
import { traceOutcome, traceWork, type PaidRoute } from '../paid-route.ts';
import type { Tracing } from '../../tracing/paid-call-trace.ts';
import { MCP_PATH } from './discovery.ts';
import type { HttpMetrics } from '../metrics.ts';

export const PAYMENT_META = 'x402/payment';
/** the x402 MCP transport's extension binding (2026-07-28): a `payment_required` result instead of an error-shaped one */
export const PAYMENT_EXTENSION = 'org.x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
/** how MCP clients are told where their payment goes, in the reasons given back */
const PAYMENT_FIELD = `_meta["${PAYMENT_META}"]`;

const MCP_NAMES: WireNames = {
  noPayment: `payment required: call again with a PaymentPayload in ${PAYMENT_FIELD}`,
  network: 'network argument',
  noNetwork: 'no network argument was given',
};

/** The x402 v2 SettleResponse as `_meta["x402/payment-response"]` carries it. */
export type SettleResponse = Record<string, unknown>;

/** What became of a paid tool call. Refusals that are no matter of the payment's terms are thrown as ApiError. */
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
  /** settlement sent, outcome not known yet: the same payment, sent again, gets the result */
  | { kind: 'pending'; transaction: string | null };

export interface McpPaymentDeps {
  config: Config;
  gate: PaymentGate;
  metrics: HttpMetrics;
  tracing?: Tracing | undefined;
}

export interface PaidToolCall {
  /** the endpoint's prepared call for the tool's input */
  route: PaidRoute;
  /** `mcp://tool/<name>`: the resource paid for */
  resource: string;
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

export async function payForTool(deps: McpPaymentDeps, tool: PaidToolCall): Promise<ToolPayment> {
  const { route } = tool;
  let usage: Partial<TokenUsage> | undefined;
  const work = () =>
    deps.metrics.timeGeneration(route.capability, route.prepared.model.id, async (): Promise<WorkOutput> => {
      const output = await route.prepared.run();
      usage = output.usage;
      traceWork(route.prepared.model.id, output);
      return output;
    });
  const payment = tool.payment === undefined ? undefined : paymentFromMeta(tool.payment);
  const call: PaidCall = {
    payment,
    network: tool.network,
    names: MCP_NAMES,
    resource: tool.resource,
    model: route.prepared.model.id,
    description: route.description,
    amount: route.prepared.amount,
    maxTimeoutSeconds: deps.config.maxTimeoutSeconds[route.capability],
    // binds a proof to this tool and this exact input
    requestHash: payment === undefined ? '' : requestHash(tool.resource, tool.input),
    settleFirst: (network) => settlesFirst(deps.config.settleFirst, network, route.capability),
    metered: route.metered === true,
    work,
  };
  const outcome = await traced(deps, route, payment !== undefined, async () => {
    const processed = await deps.gate.process(call);
    traceOutcome(processed);
    return processed;
  });
  switch (outcome.kind) {
    case 'delivered':
      return {
        kind: 'delivered',
        body: outcome.body,
        charged: outcome.receipt.amount ?? route.prepared.amount,
        usage: usage ?? route.usageOf?.(outcome.body),
        receipt: v2SettleResponse(outcome.receipt),
        media: { ids: outcome.media, payment: paymentIdOfReceipt(outcome.receipt) },
      };
    case 'payment_required':
      return {
        kind: 'payment_required',
        required: paymentRequired(deps, call, tool, outcome),
        ...(outcome.failed ? { receipt: v2SettleResponse(outcome.failed.receipt) } : {}),
      };
    case 'pending':
      return { kind: 'pending', transaction: outcome.transaction };
    case 'refused': {
      const error = refusalError(outcome, payment);
      const field = outcome.subject === 'network' ? 'network' : outcome.subject === 'payment' ? PAYMENT_FIELD : undefined;
      throw new ApiError(error.status, error.code, outcome.message, { headers: error.headers, ...(field ? { field } : {}) });
    }
  }
}

/**
 * A paid call (one that carries a payment) gets a span, as on HTTP (paid-route.ts): the GenAI and x402 attributes,
 * `http.route` /mcp, and the status of the HTTP answer that carries the tool result (200).
 */
function traced(deps: McpPaymentDeps, route: PaidRoute, paid: boolean, run: () => Promise<PaymentOutcome>): Promise<PaymentOutcome> {
  if (!deps.tracing || !paid) return run();
  const { model, amount } = route.prepared;
  return deps.tracing.traceCall({ capability: route.capability, model: model.id, provider: model.provider, route: MCP_PATH, quoted: amount, streamed: false }, run, () => 200);
}

/** A delivered payment's id for GET /api/v1/payments/:id: its transaction, or (a payment channel's charge) the channel. */
function paymentIdOfReceipt(receipt: SettlementReceipt): string | undefined {
  const channel = (receipt.v2Fields?.extra.channelState as { channelId?: unknown } | undefined)?.channelId;
  return typeof channel === 'string' ? channel : receipt.transaction || undefined;
}

/** The v2 PaymentRequired of a tool call: the core's offers for the rails it names (amended as HTTP's are), the tool's extensions. */
function paymentRequired(deps: McpPaymentDeps, call: PaidCall, tool: PaidToolCall, outcome: Extract<PaymentOutcome, { kind: 'payment_required' }>): V2PaymentRequired {
  const offers = amendedOffers(deps.gate, call, outcome.rails, outcome.amend);
  const { service } = deps.config;
  return v2PaymentRequired({
    error: outcome.reason,
    resource: v2ResourceOf({ call, serviceName: service.name, tags: service.tags }),
    accepts: offers.requirements,
    extensions: { ...offers.extensions, ...tool.extensions },
  });
}
