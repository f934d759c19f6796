// Facilitators take the internal payment model; their unit tests speak the x402 v1 documents official v1
// clients produce. This reads those documents into the model field by field (network names unresolved, so a
// test can still hand a facilitator a proof for another network) and nothing else.
import type { Facilitator } from '../../src/payments/facilitator.ts';
import type { PaymentProof, PaymentRequirement } from '../../src/x402/model.ts';
import type { NetworkName } from '../../src/x402/networks.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/x402/types.ts';

export function proofOf(payload: PaymentPayload): PaymentProof {
  return { scheme: payload.scheme, network: payload.network as NetworkName, payload: payload.payload, wire: 1 };
}

export function requirementOf(requirements: PaymentRequirements): PaymentRequirement {
  return {
    scheme: requirements.scheme,
    network: requirements.network as NetworkName,
    amount: BigInt(requirements.maxAmountRequired),
    payTo: requirements.payTo,
    asset: requirements.asset,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    extra: requirements.extra,
  };
}

export function onV1Wire<F extends Facilitator>(facilitator: F) {
  return {
    inner: facilitator,
    requirementExtra: () => facilitator.requirementExtra(),
    verify: (payload: PaymentPayload, requirements: PaymentRequirements) => facilitator.verify(proofOf(payload), requirementOf(requirements)),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements) => facilitator.settle(proofOf(payload), requirementOf(requirements)),
    checkSettlement: (payload: PaymentPayload, requirements: PaymentRequirements, transaction: string) =>
      facilitator.checkSettlement(proofOf(payload), requirementOf(requirements), transaction),
    readinessProblems: (payTo = '') => facilitator.readinessProblems!(payTo),
  };
}
