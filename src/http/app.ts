// Composes the HTTP application: middleware, the three paid endpoints, and the free routes around them.
import { CLAMPED_FIELDS_HEADER, IGNORED_FIELDS_HEADER } from '../api/request-notes.ts';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../config/load.ts';
import type { Endpoint } from '../api/endpoint.ts';
import type { PaymentGate } from '../payments/gate.ts';
import type { ModelCatalog } from '../providers/catalog.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { MediaStore } from '../media/media-store.ts';
import { mediaRoutes } from '../media/media-route.ts';
import { PAYER_SIGNATURE_HEADER, PAYER_TIMESTAMP_HEADER, paymentRoutes } from './payments-route.ts';
import { adminRoutes } from './admin-routes.ts';
import { metricsToken, requireBearer } from './admin-auth.ts';
import type { Ledger } from '../store/ledger.ts';
import { readJsonBody } from './read-json.ts';
import type { CorsOptions } from './cors.ts';
import { frameMiddlewares, type AnswerFrame } from './answer-frame.ts';
import { endpointRoute } from './endpoint-route.ts';
import { renderErrorBySurface, type SurfaceShape } from './render-error.ts';
import { openaiErrorShape } from './openai/errors.ts';
import { unrouted } from './unrouted.ts';
import { CHARGE_HEADERS, endpointContext, respondPaid } from './paid-route.ts';
import { carriesPayment, PAYMENT_HEADERS, type HttpPaymentAnswers } from './payment-edge.ts';
import { requestOrigin } from './origin.ts';
import { requestHash } from '../lib/canonical-json.ts';
import { OPENAI_ROUTES, openaiRoutes } from './openai/routes.ts';
import { mountChannelRefunds } from './channel-refund-route.ts';
import { withOpenAIRoutes } from './openai/openapi.ts';
import { anthropicRoutes, MESSAGES_PATH } from './anthropic/routes.ts';
import { withAnthropicRoutes } from './anthropic/openapi.ts';
import { anthropicErrorShape } from './anthropic/errors.ts';
import { openApiDocument } from './openapi.ts';
import { docsRoutes } from './docs-page.ts';
import { withPrices } from './openapi-prices.ts';
import { SIGN_IN_WITH_X_HEADER } from '../x402/sign-in-with-x.ts';
import { paidResultForSignIn } from '../payments/sign-in-replay.ts';
import { discoveryRoutes, paymentInfoByPath } from './discovery.ts';
import { modelsListing } from './models-listing.ts';
import type { HttpMetrics } from './metrics.ts';
import type { Tracing } from '../tracing/paid-call-trace.ts';
import type { ReadinessReport } from './readiness-checks.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { paidTools } from './mcp/tools.ts';

export interface AppDeps {
  config: Config;
  log: Logger;
  endpoints: readonly Endpoint[];
  gate: PaymentGate;
  /** the HTTP wire edge of the gate: its outcomes as answers (shared with the quote lane, for its 402 cache) */
  answers: HttpPaymentAnswers;
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  media: MediaStore;
  ledger: Ledger;
  metrics: HttpMetrics;
  /** traces of the paid calls, when tracing is on (tracing/) */
  tracing?: Tracing | undefined;
  /** what every answer carries and who is told of it (shared with the quote lane) */
  frame: AnswerFrame;
  /** what /healthz reports beyond liveness (mode, networks, sandbox RPC URLs) */
  health: () => Record<string, unknown>;
  /** GET /readyz: each dependency probed (see readiness-checks.ts); the service always gives it */
  readiness?: () => Promise<ReadinessReport>;
  /** extra routes (the sandbox faucet), mounted only when present */
  extraRoutes?: Hono;
}

/**
 * What the official `openai` and `@anthropic-ai/sdk` clients send from a browser (their keys, versions and
 * x-stainless telemetry; the gateway ignores them all: payment is x402), so a page can use them unmodified.
 */
const SDK_BROWSER_HEADERS = [
  'Authorization',
  'OpenAI-Organization',
  'OpenAI-Project',
  'OpenAI-Beta',
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  ...['arch', 'helper', 'helper-method', 'lang', 'os', 'package-version', 'retry-count', 'runtime', 'runtime-version', 'timeout'].map((name) => `x-stainless-${name}`),
];

/** CORS for every route: open to all origins, every header a client of the paid routes reads exposed. */
export const CORS: CorsOptions = {
  allowHeaders: [
    'Content-Type',
    ...PAYMENT_HEADERS,
    'X-Network',
    SIGN_IN_WITH_X_HEADER,
    PAYER_TIMESTAMP_HEADER,
    PAYER_SIGNATURE_HEADER,
    'Mcp-Protocol-Version',
    'Mcp-Session-Id',
    'Last-Event-ID',
    ...SDK_BROWSER_HEADERS,
  ],
  exposeHeaders: ['X-PAYMENT-RESPONSE', 'PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-Request-Id', 'Retry-After', ...CHARGE_HEADERS, IGNORED_FIELDS_HEADER, CLAMPED_FIELDS_HEADER],
};

/** Each surface's error shape by path prefix (the longest wins); the spec's shape everywhere else. */
export const ERROR_SHAPES: readonly SurfaceShape[] = [
  { prefix: '/v1/', shape: openaiErrorShape },
  { prefix: MESSAGES_PATH, shape: anthropicErrorShape },
];

export function createApp(deps: AppDeps): Hono {
  const { config, log, gate, metrics } = deps;
  const app = new Hono();

  for (const middleware of frameMiddlewares(deps.frame, CORS)) app.use(middleware);

  for (const endpoint of deps.endpoints) {
    const routeFor = endpointRoute(endpoint, config, deps.catalog);
    app.post(endpoint.path, async (c) => {
      const body = await readJsonBody(c, config.bodyLimitBytes);
      const route = routeFor(body, endpointContext(c, deps));
      const signInHeader = c.req.header(SIGN_IN_WITH_X_HEADER);
      if (signInHeader !== undefined && !carriesPayment((name) => c.req.header(name))) {
        const hash = requestHash(endpoint.path, body);
        const origin = requestOrigin(c, config);
        const replay = await paidResultForSignIn({ header: signInHeader, origin, networks: gate.enabledNetworks, ledger: deps.ledger, requestHash: hash });
        if (replay) return c.json(replay.body, replay.status as 200, { 'Cache-Control': 'private, no-store' });
      }
      return respondPaid(c, deps, route);
    });
  }
  app.route('/', anthropicRoutes(deps));
  app.route('/', openaiRoutes(deps));
  // GET on each paid URL: payment channels' cooperative refunds (x402 batch-settlement)
  mountChannelRefunds(app, deps, [
    ...deps.endpoints.map((endpoint) => ({ path: endpoint.path, description: endpoint.description, bodyFields: {} })),
    ...OPENAI_ROUTES.map((route) => ({ path: route.path, description: route.description, bodyFields: {} })),
  ]);

  app.route('/', mcpRoutes(deps));
  const mcpTools = paidTools(deps.endpoints, deps.catalog, gate.enabledNetworks, config.bodyLimitBytes).map((tool) => tool.name);
  const discovery = { config, endpoints: deps.endpoints, catalog: deps.catalog, networks: gate.enabledNetworks, mcpTools };
  const openapi = withAnthropicRoutes(withOpenAIRoutes(withPrices(openApiDocument(deps.endpoints, paymentInfoByPath(discovery)), deps.endpoints, deps.catalog)));
  app.get('/openapi.json', (c) => c.json(openapi));
  app.route('/', docsRoutes(openapi, { playground: config.sandbox.enabled }));
  app.get('/', (c) => c.redirect('/docs'));
  const models = modelsListing(deps.catalog, deps.providers); // the catalog is fixed for the process's life
  app.get('/api/v1/ai/models', (c) => c.json(models));
  app.get('/healthz', (c) => c.json({ status: 'ok', ...deps.health() }));
  const { readiness } = deps;
  if (readiness) {
    app.get('/readyz', async (c) => {
      const report = await readiness();
      return c.json(report, report.status === 'ready' ? 200 : 503);
    });
  }
  const scrapeToken = metricsToken(config);
  if (scrapeToken) app.use('/metrics', requireBearer(scrapeToken, { realm: 'x402-ai-metrics', what: '/metrics', tokenName: 'metrics token' }));
  app.get('/metrics', async (c) =>
    c.text(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType }),
  );
  app.route('/', discoveryRoutes(discovery));
  app.route('/', mediaRoutes(deps.media));
  app.route('/', paymentRoutes(deps.ledger, { config, networks: gate.enabledNetworks }));
  app.route('/', adminRoutes(deps.ledger, config, log));
  if (deps.extraRoutes) app.route('/', deps.extraRoutes);

  app.notFound(unrouted(app));
  // one error path (render-error.ts); under /v1 an OpenAI client reads OpenAI's error shape, also for a path or
  // method no route there serves. A surface with its own shape adds itself to ERROR_SHAPES.
  app.onError(renderErrorBySurface(log, ERROR_SHAPES));
  return app;
}
