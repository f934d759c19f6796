// The one place that assembles a paid route's x402 v2 `extensions` (declared in PAYMENT-REQUIRED).
// Each extension contributes its declaration here: payment-identifier on every route, the bazaar on the spec
// route of each operation (its example is the spec's body), sign-in-with-x per 402 (below).
// Built once per route and origin (the bazaar example's media URLs are absolute), so the 402 stays a cached
// string; only the sign-in-with-x challenge, whose nonce is single-use, is made per 402 (x402/sign-in-with-x.ts,
// spliced in by the HTTP payment edge).
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { BAZAAR, bazaarExtension } from '../discovery/bazaar.ts';
import type { OperationRoute, PaidOperation } from './operations.ts';

export type RouteExtensions = Record<string, unknown>;

/** origins are few (the public URL, or the address clients reach); the memo is bounded anyway */
const MAX_ORIGINS = 64;

export function routeExtensions(operation: PaidOperation, route: OperationRoute, catalog: ModelCatalog): (origin: string) => RouteExtensions {
  const bazaar = route.surface === 'spec' ? bazaarExtension(operation.endpoint, catalog) : undefined;
  const byOrigin = new Map<string, RouteExtensions>();
  return (origin) => {
    let extensions = byOrigin.get(origin);
    if (!extensions) {
      extensions = {
        // optional: a client that sends an id gets idempotency across retries (see payments/gate.ts)
        [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
      };
      if (bazaar) extensions[BAZAAR] = bazaar(origin);
      if (byOrigin.size >= MAX_ORIGINS) byOrigin.clear();
      byOrigin.set(origin, extensions);
    }
    return extensions;
  };
}
