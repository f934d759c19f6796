// The Anthropic-compatible surface: POST /v1/messages (paid, on the same catalog, prices, payment gate and
// ledger as every chat route) and POST /v1/messages/count_tokens (free). Errors are Anthropic's
// { type: "error", error: { type, message } }; the 402 is the x402 one, byte for byte what the other chat
// routes send for the same price. The `x-api-key`, `authorization` and `anthropic-version` headers the SDK
// sends are accepted and never read: payment is the access control.
import { Hono, type Context } from 'hono';
import { chatEndpoint } from '../../api/chat-endpoint.ts';
import { endpointContext, respondPaid, type PaidRouteDeps } from '../paid-route.ts';
import { readJsonBody } from '../read-json.ts';
import { jsonSchema } from '../openapi-schema.ts';
import { messagesRequestSchema } from '../../api/anthropic/schemas.ts';
import { withNotes } from '../response-headers.ts';
import { prepareMessage, usageOfMessage } from '../../api/anthropic/messages.ts';
import { countTokens } from '../../api/anthropic/count-tokens.ts';
import { asAnthropicError } from './errors.ts';

export const MESSAGES_PATH = '/v1/messages';
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

export function anthropicRoutes(deps: PaidRouteDeps): Hono {
  const app = new Hono();
  const bodyFields = (jsonSchema(messagesRequestSchema).properties as Record<string, unknown>) ?? {};
  app.post(MESSAGES_PATH, async (c: Context) => {
    const body = await readJsonBody(c, deps.config.chatBodyLimitBytes, true);
    const prepared = prepareMessage(body, endpointContext(c, deps));
    const response = await respondPaid(c, deps, {
      path: MESSAGES_PATH,
      capability: 'chat',
      description: chatEndpoint.description,
      bodyFields,
      body,
      prepared,
      usageOf: usageOfMessage,
      metered: chatEndpoint.metered,
    });
    return withNotes(await asAnthropicError(response), prepared.notes);
  });
  app.post(COUNT_TOKENS_PATH, async (c: Context) => {
    const { count, notes } = countTokens(await readJsonBody(c, deps.config.chatBodyLimitBytes, true), deps.catalog);
    return c.json(count, 200, notes.headers());
  });
  // no onError of its own: errors reach the app's one error path (http/render-error.ts), which shapes them as
  // Anthropic's for the paths under /v1/messages (ERROR_SHAPES in app.ts)
  return app;
}
