// The OpenAI-compatible surface under /v1, on the same catalog, prices, payment gate, ledger and media
// store as the spec's routes: each route translates OpenAI's request into the spec endpoint's call and
// its answer into OpenAI's shape. Errors are OpenAI's { error: { message, type, param, code } }; the 402
// is the x402 one, byte for byte what the spec routes send for the same price.
import { Hono, type Context } from 'hono';
import type { Capability } from '../../config/schema.ts';
import type { EndpointContext, PreparedCall } from '../../api/endpoint.ts';
import { chatEndpoint } from '../../api/chat-endpoint.ts';
import { imagesEndpoint } from '../../api/images.ts';
import { ttsEndpoint } from '../../api/tts.ts';
import { endpointContext, respondPaid, type PaidRoute, type PaidRouteDeps } from '../paid-route.ts';
import { readJsonBody } from '../read-json.ts';
import { jsonSchema } from '../openapi-schema.ts';
import type { z } from 'zod';
import { openaiChatRequestSchema, openaiImageRequestSchema, openaiSpeechRequestSchema } from '../../api/openai/schemas.ts';
import { prepareChatCompletion, usageOfChatCompletion } from '../../api/openai/chat-completions.ts';
import { prepareResponse, usageOfResponse } from '../../api/openai/responses.ts';
import { responsesRequestSchema } from '../../api/openai/responses-schemas.ts';
import { prepareImageGeneration } from '../../api/openai/images.ts';
import { deliverSpeech, prepareSpeech } from '../../api/openai/speech.ts';
import { openaiModelList } from '../../api/openai/models.ts';
import { asOpenAIError } from './errors.ts';
import { withNotes } from '../response-headers.ts';
import { openaiErrorBody } from '../../api/openai/error-body.ts';

interface OpenAIRoute {
  path: string;
  capability: Capability;
  /** the spec endpoint's, so the 402 names the operation as the spec route does */
  description: string;
  requestSchema: z.ZodType;
  prepare: (body: unknown, context: EndpointContext) => PreparedCall;
  usageOf?: PaidRoute['usageOf'];
  /** charged the result's metered cost under x402 `upto` where a rail offers it (chat, as the spec route) */
  metered?: boolean;
  deliver?: (deps: PaidRouteDeps) => PaidRoute['deliver'];
}

export const OPENAI_ROUTES: readonly OpenAIRoute[] = [
  {
    path: '/v1/chat/completions',
    capability: 'chat',
    description: chatEndpoint.description,
    requestSchema: openaiChatRequestSchema,
    prepare: prepareChatCompletion,
    usageOf: usageOfChatCompletion,
    metered: chatEndpoint.metered,
  },
  {
    path: '/v1/responses',
    capability: 'chat',
    description: chatEndpoint.description,
    requestSchema: responsesRequestSchema,
    prepare: prepareResponse,
    usageOf: usageOfResponse,
    metered: chatEndpoint.metered,
  },
  {
    path: '/v1/images/generations',
    capability: 'image',
    description: imagesEndpoint.description,
    requestSchema: openaiImageRequestSchema,
    prepare: prepareImageGeneration,
  },
  {
    path: '/v1/audio/speech',
    capability: 'speech',
    description: ttsEndpoint.description,
    requestSchema: openaiSpeechRequestSchema,
    prepare: prepareSpeech,
    deliver: (deps) => (body, headers) => deliverSpeech(deps.media, body, headers),
  },
];

export function openaiRoutes(deps: PaidRouteDeps): Hono {
  const app = new Hono();
  for (const route of OPENAI_ROUTES) {
    const bodyFields = (jsonSchema(route.requestSchema).properties as Record<string, unknown>) ?? {};
    const deliver = route.deliver?.(deps);
    app.post(route.path, async (c: Context) => {
      const body = await readJsonBody(c, route.capability === 'chat' ? deps.config.chatBodyLimitBytes : deps.config.bodyLimitBytes, true);
      const prepared = route.prepare(body, endpointContext(c, deps));
      const response = await respondPaid(c, deps, {
        path: route.path,
        capability: route.capability,
        description: route.description,
        bodyFields,
        body,
        prepared,
        usageOf: route.usageOf,
        metered: route.metered,
        ...(deliver ? { deliver } : {}),
      });
      return withNotes(await asOpenAIError(response), prepared.notes);
    });
  }
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
