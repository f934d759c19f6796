// The /v1 routes and the chat event streams in the OpenAPI document, from the same zod schemas that validate them.
import { jsonSchema } from '../discovery/openapi-schema.ts';
import { TAGS } from '../discovery/openapi.ts';
import type { OperationRoute } from '../paid/operations.ts';
import { responsesEventSchema, responsesResponseSchema } from '../../api/openai/responses-schemas.ts';
import { openaiChatChunkSchema, openaiChatResponseSchema, openaiErrorSchema, openaiImageResponseSchema, openaiModelListSchema } from '../../api/openai/schemas.ts';

const SPEC_CHAT_STREAM =
  'With stream: true, text/event-stream: `data: { id, model, delta }` per piece of text as produced, then `data:` this 200 body plus `x402` (the settlement receipt: success, transaction, network, payer, amount), then `data: [DONE]`; a stream that stops short ends with `data: { error, code }`.';

/**
 * Adds the OpenAI-compatible paid routes of the table (and the free /v1/models) to the document, and the event
 * stream to the spec chat route's 200.
 */
export function withOpenAIRoutes(
  document: Record<string, unknown>,
  routes: readonly (OperationRoute & { description: string })[],
  paymentInfo: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, unknown> {
  const paths = { ...(document.paths as Record<string, any>) };
  const chat = paths['/api/v1/ai/chat']?.post?.responses?.['200'];
  if (chat) {
    chat.description = `${chat.description ?? 'OK'}. ${SPEC_CHAT_STREAM}`;
    chat.content = { ...chat.content, 'text/event-stream': { schema: { type: 'string', description: SPEC_CHAT_STREAM } } };
  }
  const error = { description: 'OpenAI-shaped error', content: { 'application/json': { schema: jsonSchema(openaiErrorSchema) } } };
  const ok: Record<string, unknown> = {
    '/v1/chat/completions': {
      'application/json': { schema: jsonSchema(openaiChatResponseSchema, 'output') },
      'text/event-stream': { schema: { ...jsonSchema(openaiChatChunkSchema, 'output'), description: 'each `data:` event; then data: [DONE]' } },
    },
    '/v1/responses': {
      'application/json': { schema: jsonSchema(responsesResponseSchema, 'output') },
      'text/event-stream': { schema: { ...jsonSchema(responsesEventSchema, 'output'), description: 'each event: `event: <type>` then `data:` this; the last is response.completed (or response.incomplete) with `x402`, the receipt' } },
    },
    '/v1/images/generations': { 'application/json': { schema: jsonSchema(openaiImageResponseSchema, 'output') } },
    '/v1/audio/speech': { 'audio/*': { schema: { type: 'string', format: 'binary' } } },
  };
  for (const route of routes) {
    paths[route.path] = {
      post: {
        tags: [TAGS.openai.name],
        summary: `${route.description} (OpenAI-compatible)`,
        ...(paymentInfo.has(route.path) ? { 'x-payment-info': paymentInfo.get(route.path) } : {}),
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.requestSchema) } } },
        responses: {
          '200': { description: 'Paid result; X-Payment-Amount, X-Payment-Amount-USDC and (chat) X-Usage-* headers (a chat stream paid under upto: the amount only in its last event)', content: ok[route.path] },
          '400': error,
          '402': { description: 'x402 Payment Required, as on the spec routes', content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentRequired' } } } },
          '409': error,
          '502': error,
        },
      },
    };
  }
  const list = jsonSchema(openaiModelListSchema, 'output') as { properties?: { data?: { items?: unknown } } };
  paths['/v1/models'] = { get: { tags: [TAGS.openai.name], summary: 'The catalog in OpenAI’s list shape (free); asked with anthropic-version, the chat models in Anthropic’s (limit, after_id, before_id)', responses: { '200': { description: 'OK', content: { 'application/json': { schema: list } } } } } };
  paths['/v1/models/{id}'] = {
    get: {
      tags: [TAGS.openai.name],
      summary: 'One model in OpenAI’s shape (free); asked with anthropic-version, a chat model in Anthropic’s',
      parameters: [{ name: 'id', in: 'path', required: true, description: 'a model id of the catalog, e.g. local/demo-bigram (its slash unescaped)', schema: { type: 'string' } }],
      responses: { '200': { description: 'The model', content: { 'application/json': { schema: list.properties?.data?.items ?? {} } } }, '404': error },
    },
  };
  return { ...document, paths };
}
