// The free routes of the Anthropic-compatible surface: POST /v1/messages/count_tokens, and GET /v1/models and
// /v1/models/:id asked with `anthropic-version` (the Anthropic SDK's models.list and models.retrieve; without that
// header they are OpenAI's, http/openai/routes.ts). Its paid route,
// POST /v1/messages, is an entry of the table of paid operations (http/paid/operations.ts), mounted with every
// other paid route. Errors under /v1/messages are Anthropic's { type: "error", error: { type, message } } (the
// surface's shape in that table). The `x-api-key`, `authorization` and `anthropic-version` headers the SDK sends
// are accepted and never read: payment is the access control.
import { Hono, type Context, type Next } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../../config/load.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { ApiError } from '../../errors.ts';
import { readJsonBody } from '../read-json.ts';
import { renderError } from '../render-error.ts';
import { countTokens } from '../../api/anthropic/count-tokens.ts';
import { anthropicModelPage, anthropicModels } from '../../api/anthropic/models.ts';
import { anthropicErrorShape } from './errors.ts';

export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

export function anthropicRoutes(deps: { config: Config; catalog: ModelCatalog; log: Logger }): Hono {
  const app = new Hono();
  const models = anthropicModels(deps.catalog, new Date().toISOString()); // the catalog is fixed for the process's life
  /** an Anthropic client's call answered by `answer` (its errors in Anthropic's shape), anyone else's passed on */
  const forAnthropic = (answer: (c: Context) => Response) => async (c: Context, next: Next) => {
    if (c.req.header('anthropic-version') === undefined) return next();
    try {
      return answer(c);
    } catch (error) {
      return renderError(error, c, deps.log, anthropicErrorShape);
    }
  };
  app.get('/v1/models', forAnthropic((c) => c.json(anthropicModelPage(models, c.req.query()))));
  app.get(
    '/v1/models/:id{.+}',
    forAnthropic((c) => {
      const model = models.find((m) => m.id === c.req.param('id'));
      if (!model) throw new ApiError(404, 'not_found', `no chat model ${JSON.stringify(c.req.param('id'))}`, { field: 'model' });
      return c.json(model);
    }),
  );
  app.post(COUNT_TOKENS_PATH, async (c: Context) => {
    const { count, notes } = countTokens(await readJsonBody(c, deps.config.chatBodyLimitBytes, true), deps.catalog);
    return c.json(count, 200, notes.headers());
  });
  // no onError of its own: errors reach the app's one error path (http/render-error.ts)
  return app;
}
