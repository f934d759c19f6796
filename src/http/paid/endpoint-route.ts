// A spec endpoint as a paid route: what is fixed per endpoint (its body's JSON Schema, its v2 extensions) is
// worked out once, what depends on the request (the body, the call prepared from it) per call. The app's
// handler and the quote lane (quote-lane.ts) both take their routes here, so both quote alike.
import type { Config } from '../../config/load.ts';
import type { Endpoint, EndpointContext } from '../../api/endpoint.ts';
import type { ModelCatalog } from '../../providers/catalog.ts';
import type { PaidRoute } from './paid-route.ts';
import { withFallback } from '../../api/fallback.ts';
import { bodyFieldsOf } from '../discovery/openapi.ts';
import { routeExtensions } from './route-extensions.ts';

export type EndpointRoute = (body: unknown, context: EndpointContext) => PaidRoute;

/** Throws the endpoint's ApiError when the body is not a valid call. */
export function endpointRoute(endpoint: Endpoint, config: Config, catalog: ModelCatalog): EndpointRoute {
  const bodyFields = bodyFieldsOf(endpoint);
  const extensions = routeExtensions(endpoint, config, catalog);
  return (body, context) => ({
    path: endpoint.path,
    capability: endpoint.capability,
    description: endpoint.description,
    bodyFields,
    extensions,
    body,
    prepared: withFallback(endpoint, body, context, endpoint.prepare(body, context)),
    usageOf: endpoint.usageOf,
    metered: endpoint.metered,
  });
}
