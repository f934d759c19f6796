// A facilitator whose code is loaded at its first verify or settle, not at startup: the sandbox's Solana
// facilitator, so an idle service holds none of @solana/kit. What the 402 needs of it (`extra`) is known
// without it. Readiness is checked once it is loaded; before, nothing has been paid on it to check.
import { FacilitatorUnavailableError, type Facilitator } from '../facilitator.ts';
import { atFirstUse } from '../../lib/at-first-use.ts';

export function loadedAtFirstUse(extra: Record<string, unknown>, load: () => Promise<Facilitator>): Facilitator {
  const loaded = atFirstUse(load);
  const facilitator = () =>
    loaded.get().catch((error: unknown) => {
      throw new FacilitatorUnavailableError('the facilitator could not be loaded', error);
    });
  return {
    requirementExtra: async () => extra,
    verify: async (proof, requirement) => (await facilitator()).verify(proof, requirement),
    settle: async (proof, requirement, amount) => (await facilitator()).settle(proof, requirement, amount),
    checkSettlement: async (proof, requirement, transaction) => (await facilitator()).checkSettlement(proof, requirement, transaction),
    readinessProblems: async (payTo) => (await loaded.ifOpen()?.readinessProblems?.(payTo)) ?? [],
  };
}
