// The one place that assembles a paid route's x402 v2 `extensions` (declared in PAYMENT-REQUIRED).
// Each extension contributes its declaration here: payment-identifier, bazaar, sign-in-with-x...
// Built once per route at startup, so the 402 stays a cached string.
import type { Config } from '../config/load.ts';
import type { Endpoint } from '../api/endpoint.ts';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';

export type RouteExtensions = Record<string, unknown>;

export function routeExtensions(_endpoint: Endpoint, _config: Config): RouteExtensions {
  const extensions: RouteExtensions = {
    // optional: a client that sends an id gets idempotency across retries (see payments/gate.ts)
    [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
  };
  return extensions;
}
