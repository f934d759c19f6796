// The MCP surface's one door to the payment gate. A tool call is paid like an HTTP call: the same gate, ledger,
// requirements and rules; only the wire differs (x402's MCP transport carries objects in `_meta`, not base64
// headers). Until the gate speaks typed outcomes (the seam), this edge talks to it through its header interface:
// the `_meta["x402/payment"]` object goes in as the PAYMENT-SIGNATURE value the v2 codec decodes, and the
// PAYMENT-REQUIRED / PAYMENT-RESPONSE headers come back out as the objects MCP clients read.
import type { WorkOutput } from '../api/endpoint.ts';
import type { TokenUsage } from '../pricing/token-usage.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import { decodeHeader, encodeHeader } from '../x402/encoding.ts';
import { V2_PROOF_HEADER, V2_RECEIPT_HEADER, V2_REQUIRED_HEADER, type V2PaymentRequired } from '../x402/v2/codec.ts';
import { gateCall, type PaidRoute, type PaidRouteDeps } from '../http/paid-route.ts';
import { requestHash } from '../http/canonical-json.ts';

/** The x402 v2 SettleResponse as `_meta["x402/payment-response"]` carries it. */
export interface SettleResponse {
  success: boolean;
  transaction: string;
  network: string;
  payer?: string;
  amount?: string;
  errorReason?: string;
  errorMessage?: string;
}

/** What became of a paid tool call. Refusals that are no payment matter (bad input, a proof in use) are thrown as ApiError. */
export type ToolPayment =
  | { kind: 'delivered'; body: unknown; charged: bigint; usage: Partial<TokenUsage> | undefined; receipt: SettleResponse }
  /** no payment, or one that was refused (its reason in `required.error`); `receipt`: the settlement that failed */
  | { kind: 'payment_required'; required: V2PaymentRequired; receipt?: SettleResponse }
  /** settlement sent, outcome not known yet: the same payment, sent again, gets the result */
  | { kind: 'pending'; transaction: string | null; message: string };

export interface PaidToolCall {
  /** the endpoint's prepared call for the tool's input, with the tool's own `extensions` */
  route: PaidRoute;
  /** `mcp://tool/<name>`: the resource paid for */
  resource: string;
  /** the tool input exactly as called: a proof is honoured only for the input it paid */
  input: unknown;
  /** `_meta["x402/payment"]` as received (a v2 PaymentPayload object when well formed); undefined when absent */
  payment: unknown;
  /** the network the caller asked to pay on (the tool's `network` argument), like X-Network */
  network: string | undefined;
  /** where this service is reached: media URLs in results */
  origin: string;
}

export async function payForTool(deps: PaidRouteDeps, call: PaidToolCall): Promise<ToolPayment> {
  const { route } = call;
  const proof = call.payment === undefined ? undefined : encodeHeader(call.payment);
  const headers: Record<string, string | undefined> = { [V2_PROOF_HEADER]: proof, 'X-Network': call.network };
  let usage: Partial<TokenUsage> | undefined;
  const work = () =>
    deps.metrics.timeGeneration(route.capability, route.prepared.model.id, async (): Promise<WorkOutput> => {
      const output = await route.prepared.run();
      usage = output.usage;
      return output;
    });
  const { signInChallenge: _httpOnly, ...httpCall } = await gateCall(deps, route, { header: (name) => headers[name], origin: call.origin }, work);
  const response = await deps.gate.handle({
    ...httpCall,
    resource: call.resource,
    requestHash: proof === undefined ? '' : requestHash(call.resource, call.input),
  });

  if (response.status === 200) {
    const receipt = decodeHeader(response.headers[V2_RECEIPT_HEADER] ?? '') as SettleResponse | undefined;
    if (!receipt) throw new Error('the gate delivered a result without its v2 receipt');
    return { kind: 'delivered', body: response.body, charged: response.charged ?? route.prepared.amount, usage: usage ?? route.usageOf?.(response.body), receipt };
  }
  if (response.status === 402) {
    const required = decodeHeader(response.headers[V2_REQUIRED_HEADER] ?? '') as V2PaymentRequired | undefined;
    if (!required) throw new Error('the gate answered 402 without PAYMENT-REQUIRED');
    const failed = response.headers[V2_RECEIPT_HEADER];
    return failed === undefined ? { kind: 'payment_required', required } : { kind: 'payment_required', required, receipt: decodeHeader(failed) as SettleResponse };
  }
  const body = (typeof response.body === 'string' ? JSON.parse(response.body) : response.body) as { error?: string; code?: ErrorCode; transaction?: string | null };
  if (body.code === 'settlement_pending') return { kind: 'pending', transaction: body.transaction ?? null, message: body.error ?? 'settlement is pending' };
  throw new ApiError(response.status, body.code ?? 'internal_error', body.error ?? 'the payment was refused', { headers: response.headers });
}
