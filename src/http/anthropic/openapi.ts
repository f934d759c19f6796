// The Anthropic-compatible routes in the OpenAPI document, from the same zod schemas that validate them.
import { jsonSchema } from '../discovery/openapi-schema.ts';
import { COUNT_TOKENS_PATH } from './routes.ts';
import type { OperationRoute } from '../paid/operations.ts';
import { anthropicErrorSchema, countTokensRequestSchema, countTokensResponseSchema, messagesEventSchema, messagesResponseSchema } from '../../api/anthropic/schemas.ts';

const TAG = 'Anthropic-compatible';
const TAG_DESCRIPTION = 'The same chat models behind Anthropic-shaped routes (the Messages API), paid the same way';

/** Adds the Anthropic-compatible paid routes of the table (the Messages API) and the free count_tokens to the document. */
export function withAnthropicRoutes(
  document: Record<string, unknown>,
  routes: readonly OperationRoute[],
  paymentInfo: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, unknown> {
  const paths = { ...(document.paths as Record<string, unknown>) };
  const error = { description: 'Anthropic-shaped error', content: { 'application/json': { schema: jsonSchema(anthropicErrorSchema, 'output') } } };
  for (const route of routes) paths[route.path] = messagesPath(route, error, paymentInfo.get(route.path));
  paths[COUNT_TOKENS_PATH] = {
    post: {
      tags: [TAG],
      summary: 'Estimate the input tokens of a Messages request (free)',
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(countTokensRequestSchema) } } },
      responses: { '200': { description: 'OK', content: { 'application/json': { schema: jsonSchema(countTokensResponseSchema, 'output') } } }, '400': error, '404': error },
    },
  };
  const tags = [...((document.tags as unknown[] | undefined) ?? []), { name: TAG, description: TAG_DESCRIPTION }];
  return { ...document, tags, paths };
}

function messagesPath(route: OperationRoute, error: Record<string, unknown>, paymentInfo: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    post: {
      tags: [TAG],
      summary: 'Run a chat model (Anthropic Messages API)',
      ...(paymentInfo ? { 'x-payment-info': paymentInfo } : {}),
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.requestSchema) } } },
      responses: {
        '200': {
          description: 'Paid result; X-Payment-Amount, X-Payment-Amount-USDC and X-Usage-* headers (a stream paid under upto: the amount only in its message_stop event)',
          content: {
            'application/json': { schema: jsonSchema(messagesResponseSchema, 'output') },
            'text/event-stream': { schema: { ...jsonSchema(messagesEventSchema, 'output'), description: 'each event: `event: <type>` then `data:` this; message_stop carries `x402`, the receipt' } },
          },
        },
        '400': error,
        '402': { description: 'x402 Payment Required, as on the spec routes', content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentRequired' } } } },
        '404': error,
        '409': error,
        '502': error,
      },
    },
  };
}
