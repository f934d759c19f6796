// A fetch for an MCP client's Streamable HTTP transport that pays the gateway's tools as it calls them, whichever
// binding of x402's MCP transport the answer uses: the `org.x402/payment` extension's `payment_required` result
// (2026-07-28, for a client that advertises the extension), or the tool-result binding's error result holding the
// PaymentRequired. On either, the price is checked against maxPrice, the payer signs, and the same JSON-RPC request
// goes again with the payment in `params._meta["x402/payment"]`; the MCP client only ever sees the paid result.
// Scheme clients that keep state (batch-settlement) hear of each receipt, and of a corrective answer, which they
// resynchronise from before the one retry it allows. A pending settlement is asked about again with the SAME payment.
import type { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { MaxPriceExceededError, NetworkNotOfferedError } from './errors.ts';
import { NETWORKS, resolveNetworkName } from '../x402/networks.ts';
import { offerAmount, signableOffers } from './offer-terms.ts';

export interface McpPaymentOptions {
  /** signs the payment: an x402Client with the v2 schemes of the buyer's chains (see mcpPayer) */
  payer: x402Client;
  /** hard cap per call in USDC atomic units; a higher price is refused before signing */
  maxPrice: bigint;
  /** pay only on this network (a name or CAIP-2 id) */
  network?: string;
  /** the fetch to wrap (default: the global one) */
  fetch?: typeof fetch;
  /** how many times a pending settlement is asked about again; default 20, one second apart */
  pendingRetries?: number;
}

const PAYABLE = new Set(['tools/call', 'resources/read', 'prompts/get']);
const PENDING = new Set(['settlement_pending', 'payment_in_progress']);

interface Call {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: { _meta?: Record<string, unknown> } & Record<string, unknown>;
}

type Answer = { result?: Record<string, unknown> } | undefined;

/** The PaymentRequired of an answer in either binding, or undefined when it asks for none. */
export function requiredPayment(answer: Answer): PaymentRequired | undefined {
  const result = answer?.result;
  if (result?.resultType === 'payment_required') return result.paymentRequired as PaymentRequired;
  const structured = result?.structuredContent as { x402Version?: unknown; accepts?: unknown } | undefined;
  return result?.isError === true && structured?.x402Version === 2 && Array.isArray(structured.accepts) ? (structured as PaymentRequired) : undefined;
}

export function paidMcpFetch(options: McpPaymentOptions): typeof fetch {
  const base = options.fetch ?? fetch;
  const network = options.network === undefined ? undefined : resolveNetworkName(options.network);
  if (options.network !== undefined && !network) throw new NetworkNotOfferedError(options.network, []);

  async function sign(required: PaymentRequired): Promise<PaymentPayload> {
    const onNetwork = required.accepts.filter((accept) => !network || accept.network === NETWORKS[network].caip2);
    if (onNetwork.length === 0) throw new NetworkNotOfferedError(options.network!, required.accepts.map((accept) => accept.network));
    const signable = signableOffers(onNetwork, options.network ?? 'any network');
    const affordable = signable.filter((accept) => offerAmount(accept) <= options.maxPrice);
    if (affordable.length === 0) throw new MaxPriceExceededError(offerAmount(signable[0]!), options.maxPrice);
    return options.payer.createPaymentPayload({ ...required, accepts: affordable });
  }

  return async (input, init) => {
    const call = payableCall(init);
    const first = await base(input, init);
    if (!call) return first;
    let { response, answer } = await read(first);
    let required = requiredPayment(answer);
    if (!required) return response;

    let payment = await sign(required);
    const send = async () => read(await base(input, { ...init, body: JSON.stringify(withPayment(call, payment)) }));
    for (let attempt = 0, pending = 0; ; attempt++) {
      ({ response, answer } = await send());
      const receipt = (answer?.result?._meta as Record<string, unknown> | undefined)?.['x402/payment-response'] as SettleResponse | undefined;
      required = requiredPayment(answer);
      // what the HTTP client tells its schemes (@x402/core's processPaymentResult): the receipt, else the requirements
      const context = { paymentPayload: payment, requirements: payment.accepted, ...(receipt ? { settleResponse: receipt } : required ? { paymentRequired: required } : {}) };
      const heard = receipt || required ? await options.payer.handlePaymentResponse(context) : undefined;
      if (heard?.recovered && required && !receipt && attempt === 0) {
        // a corrective answer (a channel's state the payer lost): resynchronised, one new payment
        payment = await sign(required);
        continue;
      }
      if (!required && isPending(answer) && pending++ < (options.pendingRetries ?? 20)) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      return response;
    }
  };
}

/** A JSON-RPC request for a paid operation, from the transport's fetch arguments; undefined for anything else. */
function payableCall(init: RequestInit | undefined): Call | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return undefined;
  try {
    const message = JSON.parse(init.body) as Call;
    return message && typeof message === 'object' && PAYABLE.has(message.method) && message.id !== undefined ? message : undefined;
  } catch {
    return undefined;
  }
}

function withPayment(call: Call, payment: PaymentPayload): Call {
  return { ...call, params: { ...call.params, _meta: { ...call.params?._meta, 'x402/payment': payment } } };
}

/** The answer's JSON (a single JSON document; a stream is left to the MCP client), and a response to hand on. */
async function read(response: Response): Promise<{ response: Response; answer: Answer }> {
  if (!response.headers.get('content-type')?.includes('application/json')) return { response, answer: undefined };
  const text = await response.text();
  let answer: Answer;
  try {
    answer = JSON.parse(text) as Answer;
  } catch {
    answer = undefined;
  }
  return { response: new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers }), answer };
}

function isPending(answer: Answer): boolean {
  const error = (answer?.result?.structuredContent as { error?: { code?: string } } | undefined)?.error;
  return answer?.result?.isError === true && PENDING.has(error?.code ?? '');
}
