// Tool results in the forms MCP clients read: a paid result as content an agent can use (text, image and audio
// content, hosted URLs) with the receipt in `_meta["x402/payment-response"]`; a payment requirement as the x402
// MCP transport states it (isError, `structuredContent` = PaymentRequired, `content[0].text` = the
// `x402/error` wrapper); any other refusal as an error result naming its code.
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ChatResponse, ImageResponse, TtsResponse } from '../../api/schemas.ts';
import type { Capability } from '../../config/schema.ts';
import { isMediaId, type MediaStore } from '../../media/media-store.ts';
import type { OutcomeError } from '../paid/payment-edge.ts';
import { formatUsdc } from '../../pricing/usdc.ts';
import type { V2PaymentRequired } from '../../x402/v2/codec.ts';
import { PAYMENT_RESPONSE_META, type SettleResponse, type ToolPayment } from './payment-edge.ts';

export const X402_ERROR = 'x402/error';

/** Unpaid, or the payment was refused: the requirements again, with the reason in `error`. */
export function paymentRequiredResult(required: V2PaymentRequired, failedSettlement?: SettleResponse): CallToolResult {
  // a failed settlement is stated beside the requirements; no tool content goes with it
  const data = failedSettlement ? { ...required, [PAYMENT_RESPONSE_META]: failedSettlement } : required;
  const message = failedSettlement ? `Payment settlement failed: ${String(failedSettlement.errorReason ?? 'unknown')}; nothing was charged` : required.error;
  return {
    isError: true,
    structuredContent: data as unknown as Record<string, unknown>,
    content: [{ type: 'text', text: JSON.stringify({ [X402_ERROR]: { code: 402, message, data } }) }],
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
  const content = await contentOf(capability, payment.body, media);
  return {
    content,
    structuredContent: { result: payment.body as Record<string, unknown>, ...charge(payment) },
    _meta: { [PAYMENT_RESPONSE_META]: payment.receipt },
  };
}

async function contentOf(capability: Capability, body: unknown, media: MediaStore): Promise<ContentBlock[]> {
  switch (capability) {
    case 'chat':
      return [{ type: 'text', text: (body as ChatResponse).response }];
    case 'image': {
      const urls = (body as ImageResponse).images;
      const blocks = await Promise.all(urls.map((url) => mediaContent('image', url, media)));
      return [...blocks.flat(), { type: 'text', text: `Images (hosted until the retention period ends):\n${urls.join('\n')}` }];
    }
    case 'speech': {
      const url = (body as TtsResponse).audioUrl;
      return [...(await mediaContent('audio', url, media)), { type: 'text', text: `Audio (hosted until the retention period ends): ${url}` }];
    }
  }
}

/** A stored file as image or audio content (base64), and as a link to its hosted URL; just the link when it is gone. */
async function mediaContent(type: 'image' | 'audio', url: string, media: MediaStore): Promise<ContentBlock[]> {
  const id = url.slice(url.lastIndexOf('/') + 1);
  const info = isMediaId(id) ? await media.info(id) : undefined;
  const link: ContentBlock = { type: 'resource_link', uri: url, name: id, ...(info ? { mimeType: info.contentType } : {}) };
  if (!info) return [link];
  const chunks: Uint8Array[] = [];
  for await (const chunk of await media.read(id)) chunks.push(chunk);
  return [{ type, data: Buffer.concat(chunks).toString('base64'), mimeType: info.contentType }, link];
}
