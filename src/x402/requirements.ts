// Builds the PaymentRequirements the server demands. Everything in it is derived server-side:
// nothing a client sends decides the price, the recipient, the asset or the network.
import type { PaymentRequirements } from './types.ts';

export interface RequirementInput {
  scheme: string;
  network: string;
  amount: bigint;
  resource: string;
  description: string;
  payTo: string;
  asset: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
  /** JSON Schema of the request body, for discovery */
  bodyFields: Record<string, unknown>;
}

export function buildRequirement(input: RequirementInput): PaymentRequirements {
  return {
    scheme: input.scheme,
    network: input.network,
    maxAmountRequired: input.amount.toString(),
    resource: input.resource,
    description: input.description,
    mimeType: 'application/json',
    payTo: input.payTo,
    maxTimeoutSeconds: input.maxTimeoutSeconds,
    asset: input.asset,
    outputSchema: {
      input: { type: 'http', method: 'POST', discoverable: true, bodyType: 'json', bodyFields: input.bodyFields },
    },
    extra: input.extra,
  };
}
