// The free route of the Anthropic-compatible surface: POST /v1/messages/count_tokens. Its paid route,
// POST /v1/messages, is an entry of the table of paid operations (http/paid/operations.ts), mounted with every
// other paid route. Errors under /v1/messages are Anthropic's { type: "error", error: { type, message } } (the
// surface's shape in that table). The `x-api-key`, `authorization` and `anthropic-version` headers the SDK sends
// are accepted and never read: payment is the access control.
import { Hono, type Context } from 'hono';
import type { Config } from '../../config/load.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { readJsonBody } from '../read-json.ts';
import { countTokens } from '../../api/anthropic/count-tokens.ts';

export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

export function anthropicRoutes(deps: { config: Config; catalog: ModelCatalog }): Hono {
  const app = new Hono();
  app.post(COUNT_TOKENS_PATH, async (c: Context) => {
    const { count, notes } = countTokens(await readJsonBody(c, deps.config.chatBodyLimitBytes, true), deps.catalog);
    return c.json(count, 200, notes.headers());
  });
  // no onError of its own: errors reach the app's one error path (http/render-error.ts)
  return app;
}
