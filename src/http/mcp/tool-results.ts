// Tool results in the forms MCP clients read: a paid result as content an agent can use (text, image and audio
// content, each file's resource link) with the receipt in `_meta["x402/payment-response"]`; a payment requirement
// in one of the x402 MCP transport's two bindings (the extension binding's `payment_required` result, or the
// tool-result binding's error result: `structuredContent` = PaymentRequired, `content[0].text` = the same as
// JSON); any other refusal as an error result naming its code.
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import type { ChatResponse, ImageResponse, TtsResponse } from '../../api/schemas.ts';
import type { Capability } from '../../config/schema.ts';
import { isMediaId, type MediaStore } from '../../media/media-store.ts';
import type { OutcomeError } from '../paid/payment-edge.ts';
import { formatUsdc } from '../../pricing/usdc.ts';
import type { V2PaymentRequired } from '../../x402/v2/codec.ts';
import { PAYMENT_RESPONSE_META, type SettleResponse, type ToolPayment } from './payment-edge.ts';
import { base64Of, mediaResourceUri } from './resources.ts';

/**
 * Unpaid, or the payment was refused: the requirements again, with the reason in `error`; a settlement that failed
 * (the result withheld, nothing charged) in `_meta["x402/payment-response"]`. `extension`: the client advertised
 * the `org.x402/payment` extension on 2026-07-28, and gets its `payment_required` result type.
 */
export function paymentRequiredResult(required: V2PaymentRequired, failedSettlement: SettleResponse | undefined, extension: boolean): CallToolResult {
  const meta = failedSettlement ? { _meta: { [PAYMENT_RESPONSE_META]: failedSettlement } } : {};
  // not a CallToolResult: the extension's own result type, which the MCP SDK passes through on tools/call
  if (extension) return { resultType: 'payment_required', paymentRequired: required, ...meta } as unknown as CallToolResult;
  return {
    isError: true,
    structuredContent: required as unknown as Record<string, unknown>,
    content: [{ type: 'text', text: JSON.stringify(required) }],
    ...meta,
  };
}

/**
 * Any other answer (bad input, a proof being used, a settlement still pending, a failed model): its status, code and
 * words as the HTTP routes give them; nothing was charged unless it says so.
 */
export function errorResult(error: Pick<OutcomeError, 'status' | 'code' | 'message' | 'field' | 'headers' | 'transaction'>): CallToolResult {
  const retryAfter = error.headers['Retry-After'];
  const stated = {
    status: error.status,
    code: error.code,
    message: error.message,
    ...(error.field ? { field: error.field } : {}),
    ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}),
    ...(error.transaction === undefined ? {} : { transaction: error.transaction }),
  };
  return { isError: true, structuredContent: { error: stated }, content: [{ type: 'text', text: JSON.stringify({ error: stated }) }] };
}

/** What was charged and the tokens used, as the HTTP routes state them in their X-Payment-* / X-Usage-* headers. */
function charge(payment: Extract<ToolPayment, { kind: 'delivered' }>): Record<string, unknown> {
  const usage = payment.usage;
  return {
    charged: { amount: payment.charged.toString(), usdc: formatUsdc(payment.charged), network: payment.receipt.network, transaction: payment.receipt.transaction },
    ...(usage && Object.keys(usage).length > 0 ? { usage } : {}),
  };
}

/** A paid result: the generation as content, the endpoint's JSON body and the charge as structuredContent, the receipt in `_meta`. */
export async function deliveredResult(capability: Capability, payment: Extract<ToolPayment, { kind: 'delivered' }>, media: MediaStore): Promise<CallToolResult> {
  const content = await contentOf(capability, payment.body, mediaLinks(payment.media, media));
  return {
    content,
    structuredContent: { result: payment.body as Record<string, unknown>, ...charge(payment) },
    _meta: { [PAYMENT_RESPONSE_META]: payment.receipt },
  };
}

type MediaContent = (type: 'image' | 'audio', url: string) => Promise<ContentBlock[]>;

async function contentOf(capability: Capability, body: unknown, mediaContent: MediaContent): Promise<ContentBlock[]> {
  switch (capability) {
    case 'chat':
      return [{ type: 'text', text: (body as ChatResponse).response }];
    case 'image': {
      const urls = (body as ImageResponse).images;
      const blocks = await Promise.all(urls.map((url) => mediaContent('image', url)));
      return [...blocks.flat(), { type: 'text', text: `Images (hosted until the retention period ends):\n${urls.join('\n')}` }];
    }
    case 'speech': {
      const url = (body as TtsResponse).audioUrl;
      return [...(await mediaContent('audio', url)), { type: 'text', text: `Audio (hosted until the retention period ends): ${url}` }];
    }
  }
}

/**
 * A stored file as image or audio content (base64), and a link to it: the MCP resource its payer reads it back
 * with (resources.ts), or its hosted URL when the payment has no id to name it by; just the link when it is gone.
 */
function mediaLinks(paid: { ids: string[]; payment: string | undefined }, media: MediaStore): MediaContent {
  return async (type, url) => {
    const id = url.slice(url.lastIndexOf('/') + 1);
    const info = isMediaId(id) ? await media.info(id) : undefined;
    const uri = paid.payment !== undefined && paid.ids.includes(id) ? mediaResourceUri(paid.payment, id) : url;
    const link: ContentBlock = { type: 'resource_link', uri, name: id, ...(info ? { mimeType: info.contentType } : {}) };
    if (!info) return [link];
    return [{ type, data: await base64Of(media, id), mimeType: info.contentType }, link];
  };
}

