// What the gateway sells, each operation declared once with every surface that sells it. The spec routes, the
// OpenAI-compatible /v1 routes, the Anthropic-compatible /v1/messages, the MCP tools, the refund routes, the
// OpenAPI document, discovery and the bazaar are all derived from this table (app.ts, mcp/, discovery/). Adding
// an operation or a surface is an entry here and one translator in api/.
import type { z } from 'zod';
import type { Endpoint, EndpointContext, PreparedCall } from '../../api/endpoint.ts';
import type { TokenUsage } from '../../pricing/token-usage.ts';
import type { MediaStore } from '../../media/media-store.ts';
import type { OperationTerms } from '../../payments/paid-call.ts';
import type { SchemeName } from '../../payments/outcome.ts';
import { chatEndpoint } from '../../api/chat-endpoint.ts';
import { imagesEndpoint } from '../../api/images.ts';
import { ttsEndpoint } from '../../api/tts.ts';
import { withFallback } from '../../api/fallback.ts';
import { openaiChatRequestSchema, openaiImageRequestSchema, openaiSpeechRequestSchema } from '../../api/openai/schemas.ts';
import { prepareChatCompletion, usageOfChatCompletion } from '../../api/openai/chat-completions.ts';
import { prepareResponse, usageOfResponse } from '../../api/openai/responses.ts';
import { responsesRequestSchema } from '../../api/openai/responses-schemas.ts';
import { prepareImageGeneration } from '../../api/openai/images.ts';
import { deliverSpeech, prepareSpeech } from '../../api/openai/speech.ts';
import { messagesRequestSchema } from '../../api/anthropic/schemas.ts';
import { prepareMessage, usageOfMessage } from '../../api/anthropic/messages.ts';
import { specErrorShape, type ErrorShape } from '../render-error.ts';
import { openaiErrorShape } from '../openai/errors.ts';
import { anthropicErrorShape } from '../anthropic/errors.ts';
import { MCP_PATH, mcpErrorShape } from '../mcp/json-rpc.ts';

/** A family of routes that speak one API's dialect. */
export interface Surface {
  /** the paths it answers under: its error shape holds there for every answer, routed or not (longest prefix wins) */
  prefix: string;
  /** how an error other than the 402 is answered (the 402 is x402's on every surface) */
  errorShape: ErrorShape;
  /**
   * Also read a body declared text/plain: x402-fetch 1.x rebuilds a paid request's headers by spreading them,
   * which loses the Content-Type of the Headers object the openai SDK passes.
   */
  plainTextBodies: boolean;
}

export type HttpSurfaceName = 'spec' | 'openai' | 'anthropic';

export const SURFACES: Readonly<Record<HttpSurfaceName, Surface>> = {
  spec: { prefix: '/api/v1/ai/', errorShape: specErrorShape, plainTextBodies: false },
  openai: { prefix: '/v1/', errorShape: openaiErrorShape, plainTextBodies: true },
  anthropic: { prefix: '/v1/messages', errorShape: anthropicErrorShape, plainTextBodies: true },
};

/** One way to call an operation over HTTP: its path (POST), its body, and its translator. */
export interface OperationRoute {
  surface: HttpSurfaceName;
  path: string;
  requestSchema: z.ZodType;
  /** the surface's body as the operation's priced call (throws the surface's ApiError for a body it refuses) */
  prepare: (body: unknown, context: EndpointContext) => PreparedCall;
  /** tokens a kept 200 body reports, for the usage headers of a replayed result */
  usageOf?: ((body: unknown) => Partial<TokenUsage> | undefined) | undefined;
  /** an agent chat surface: a coding agent sends its whole session, read up to chatBodyLimitBytes (not bodyLimitBytes) */
  agentChat?: boolean | undefined;
  /** a paid 200 as the surface answers it, when it is not the JSON body (speech: the audio itself) */
  deliver?: ((media: MediaStore) => (body: unknown, headers: Record<string, string>) => Promise<Response> | Response) | undefined;
}

/** One thing the gateway sells, and every surface that sells it. */
export interface PaidOperation extends OperationTerms {
  /** the spec's contract for it: summary, response schema, the bazaar's example */
  endpoint: Endpoint;
  /** whether a call may ask for its answer as server-sent events */
  streams: boolean;
  /** whether a payment channel on it is refunded by GET on each of its URLs (x402 batch-settlement's refund) */
  refunds: boolean;
  routes: readonly OperationRoute[];
  /** its MCP tool's name; the tool takes the spec route's body (without its stream fields) and `network` */
  tool: string;
}

/** The spec route: the endpoint's own body, with model fallback. */
function specRoute(endpoint: Endpoint): OperationRoute {
  return {
    surface: 'spec',
    path: endpoint.path,
    requestSchema: endpoint.requestSchema,
    prepare: (body, context) => withFallback(endpoint, body, context, endpoint.prepare(body, context)),
    usageOf: endpoint.usageOf,
  };
}

/** Every operation takes exact; a metered one also upto; payment channels and auth-capture on all. */
const schemes = (metered: boolean): SchemeName[] => (metered ? ['exact', 'upto', 'batch-settlement', 'auth-capture'] : ['exact', 'batch-settlement', 'auth-capture']);

export const PAID_OPERATIONS: readonly PaidOperation[] = [
  {
    endpoint: chatEndpoint,
    capability: 'chat',
    description: chatEndpoint.description,
    metered: true,
    schemes: schemes(true),
    streams: true,
    refunds: true,
    tool: 'chat',
    routes: [
      specRoute(chatEndpoint),
      { surface: 'openai', path: '/v1/chat/completions', requestSchema: openaiChatRequestSchema, prepare: prepareChatCompletion, usageOf: usageOfChatCompletion, agentChat: true },
      { surface: 'openai', path: '/v1/responses', requestSchema: responsesRequestSchema, prepare: prepareResponse, usageOf: usageOfResponse, agentChat: true },
      { surface: 'anthropic', path: '/v1/messages', requestSchema: messagesRequestSchema, prepare: prepareMessage, usageOf: usageOfMessage, agentChat: true },
    ],
  },
  {
    endpoint: imagesEndpoint,
    capability: 'image',
    description: imagesEndpoint.description,
    metered: false,
    schemes: schemes(false),
    streams: false,
    refunds: true,
    tool: 'generate_image',
    routes: [
      specRoute(imagesEndpoint),
      { surface: 'openai', path: '/v1/images/generations', requestSchema: openaiImageRequestSchema, prepare: prepareImageGeneration },
    ],
  },
  {
    endpoint: ttsEndpoint,
    capability: 'speech',
    description: ttsEndpoint.description,
    metered: false,
    schemes: schemes(false),
    streams: false,
    refunds: true,
    tool: 'text_to_speech',
    routes: [
      specRoute(ttsEndpoint),
      {
        surface: 'openai',
        path: '/v1/audio/speech',
        requestSchema: openaiSpeechRequestSchema,
        prepare: prepareSpeech,
        deliver: (media) => (body, headers) => deliverSpeech(media, body, headers),
      },
    ],
  },
];

/** Each HTTP route of the table beside its operation. */
export function httpRoutes(operations: readonly PaidOperation[] = PAID_OPERATIONS): { operation: PaidOperation; route: OperationRoute }[] {
  return operations.flatMap((operation) => operation.routes.map((route) => ({ operation, route })));
}

/** The surfaces' error shapes by path prefix, for every answer under them (render-error.ts); /mcp answers in JSON-RPC. */
export const ERROR_SHAPES = [...Object.values(SURFACES).map(({ prefix, errorShape }) => ({ prefix, shape: errorShape })), { prefix: MCP_PATH, shape: mcpErrorShape }];
