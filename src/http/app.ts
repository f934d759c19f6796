// Composes the HTTP application: middleware, the three paid endpoints, and the free routes around them.
import { CLAMPED_FIELDS_HEADER, IGNORED_FIELDS_HEADER } from '../api/request-notes.ts';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../config/load.ts';
import type { PaymentGate } from '../payments/gate.ts';
import type { ModelCatalog } from '../providers/catalog.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { MediaStore } from '../media/media-store.ts';
import { mediaRoutes } from '../media/media-route.ts';
import { PAYER_SIGNATURE_HEADER, PAYER_TIMESTAMP_HEADER, paymentRoutes } from './paid/payments-route.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { metricsToken, requireBearer } from './admin/admin-auth.ts';
import type { Ledger } from '../store/ledger.ts';
import type { CorsOptions } from './cors.ts';
import { frameMiddlewares, type AnswerFrame } from './answer-frame.ts';
import { renderErrorBySurface } from './render-error.ts';
import { unrouted } from './unrouted.ts';
import { answerPaidRoute, answerRefund, CHARGE_HEADERS, paidRoute } from './paid/paid-route.ts';
import { carriesPayment, PAYMENT_HEADERS, type HttpPaymentAnswers } from './paid/payment-edge.ts';
import { ERROR_SHAPES, httpRoutes, type PaidOperation } from './paid/operations.ts';
import { openaiRoutes } from './openai/routes.ts';
import { anthropicRoutes } from './anthropic/routes.ts';
import { openApiDocument } from './discovery/openapi.ts';
import { withPrices } from './discovery/openapi-prices.ts';
import { withOpenAIRoutes } from './openai/openapi.ts';
import { withAnthropicRoutes } from './anthropic/openapi.ts';
import { docsRoutes } from './discovery/docs-page.ts';
import { SIGN_IN_WITH_X_HEADER } from '../x402/sign-in-with-x.ts';
import { discoveryRoutes, paymentInfoByPath } from './discovery/discovery.ts';
import { modelsListing } from './discovery/models-listing.ts';
import type { HttpMetrics } from './metrics.ts';
import type { Tracing } from '../tracing/paid-call-trace.ts';
import type { ReadinessReport } from './readiness-checks.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { paidTools } from './mcp/tools.ts';

export interface AppDeps {
  config: Config;
  log: Logger;
  /** what is sold, on which routes (paid/operations.ts: PAID_OPERATIONS) */
  operations: readonly PaidOperation[];
  gate: PaymentGate;
  /** the HTTP wire edge of the gate: its outcomes as answers (shared with the paid lane) */
  answers: HttpPaymentAnswers;
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  media: MediaStore;
  ledger: Ledger;
  metrics: HttpMetrics;
  /** traces of the paid calls, when tracing is on (tracing/) */
  tracing?: Tracing | undefined;
  /** what every answer carries and who is told of it (shared with the paid lane) */
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

/** /openapi.json: every route of the table, the spec's, the OpenAI-compatible and the Anthropic-compatible ones, with prices. */
function openApiDocumentOf(operations: readonly PaidOperation[], catalog: ModelCatalog, paymentInfo: ReadonlyMap<string, Record<string, unknown>>): Record<string, unknown> {
  const routes = httpRoutes(operations);
  const openai = routes.filter(({ route }) => route.surface === 'openai').map(({ operation, route }) => ({ ...route, description: operation.description }));
  const anthropic = routes.filter(({ route }) => route.surface === 'anthropic').map(({ route }) => route);
  const spec = withPrices(openApiDocument(operations, paymentInfo), operations, catalog);
  return withAnthropicRoutes(withOpenAIRoutes(spec, openai, paymentInfo), anthropic, paymentInfo);
}

export function createApp(deps: AppDeps): Hono {
  const { config, log, gate, metrics } = deps;
  const app = new Hono();

  for (const middleware of frameMiddlewares(deps.frame, CORS)) app.use(middleware);

  // every paid route of the table (paid/operations.ts): POST runs it; GET, from a payment channel's client,
  // refunds the channel (x402 batch-settlement), any other GET is what it was, a 405 naming POST
  for (const { operation, route } of httpRoutes(deps.operations)) {
    const paid = paidRoute(operation, route, deps);
    app.post(route.path, (c) => answerPaidRoute(c, deps, paid));
    if (operation.refunds) {
      app.use(route.path, async (c, next) => {
        const refund = c.req.method === 'GET' && (c.req.header('X-Network') !== undefined || carriesPayment((name) => c.req.header(name)));
        return refund ? answerRefund(c, deps, paid) : next();
      });
    }
  }
  app.route('/', anthropicRoutes(deps));
  app.route('/', openaiRoutes(deps));

  app.route('/', mcpRoutes(deps));
  const mcpTools = paidTools(deps.operations, deps.catalog, gate.enabledNetworks, config.bodyLimitBytes).map((tool) => tool.name);
  const discovery = { config, operations: deps.operations, catalog: deps.catalog, networks: gate.enabledNetworks, mcpTools };
  const openapi = openApiDocumentOf(deps.operations, deps.catalog, paymentInfoByPath(discovery));
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
  // method no route there serves: each surface of the table declares its prefix and shape (paid/operations.ts)
  app.onError(renderErrorBySurface(log, ERROR_SHAPES));
  return app;
}
