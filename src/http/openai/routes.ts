// The free routes of the OpenAI-compatible surface under /v1: the catalog as OpenAI lists models. Its paid routes
// (/v1/chat/completions, /v1/responses, /v1/images/generations, /v1/audio/speech) are entries of the table of paid
// operations (http/paid/operations.ts), mounted with every other paid route. Errors under /v1 are OpenAI's
// { error: { message, type, param, code } } (the surface's shape in that table); the 402 is the x402 one.
import { Hono } from 'hono';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { openaiModelList } from '../../api/openai/models.ts';
import { openaiErrorBody } from '../../api/openai/error-body.ts';

export function openaiRoutes(deps: { catalog: ModelCatalog }): Hono {
  const app = new Hono();
  const created = Math.floor(Date.now() / 1000);
  const models = openaiModelList(deps.catalog, created);
  app.get('/v1/models', (c) => c.json(models));
  app.get('/v1/models/:id{.+}', (c) => {
    const model = models.data.find((m) => m.id === c.req.param('id'));
    if (model) return c.json(model);
    return c.json(openaiErrorBody(404, 'model_not_found', `no model "${c.req.param('id')}"`, 'model'), 404);
  });
  // no onError of its own: errors reach the app's one error path (http/render-error.ts), which shapes them as OpenAI's
  return app;
}
