// The one place that assembles a paid route's x402 v2 `extensions` (declared in PAYMENT-REQUIRED).
// Each extension contributes its declaration here: payment-identifier, bazaar, sign-in-with-x...
// Built once per route and origin (the bazaar example's media URLs are absolute), so the 402 stays a cached
// string; only the sign-in-with-x challenge, whose nonce is single-use, is made per 402 (x402/sign-in-with-x.ts,
// passed to the gate as signInChallenge).
import type { Config } from '../../config/load.ts';
import type { Endpoint } from '../../api/endpoint.ts';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { ModelCatalog } from '../../providers/catalog.ts';
import { BAZAAR, bazaarExtension } from '../discovery/bazaar.ts';

export type RouteExtensions = Record<string, unknown>;

/** origins are few (the public URL, or the address clients reach); the memo is bounded anyway */
const MAX_ORIGINS = 64;

export function routeExtensions(endpoint: Endpoint, _config: Config, catalog: ModelCatalog): (origin: string) => RouteExtensions {
  const bazaar = bazaarExtension(endpoint, catalog);
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
