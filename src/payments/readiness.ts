// Checks at startup that each network can really be paid (Solana payTo token account, fee payer and
// settlement balances, the asset contract), and says loudly what an operator must fix. It never stops the
// service: an RPC that is down now may be up by the first payment, and a payment that would fail is
// refused at verification without charging anyone.
import type { Logger } from 'pino';
import type { PaymentRails } from './rails.ts';

export async function reportReadiness(rails: PaymentRails, log: Logger): Promise<void> {
  await Promise.all(
    [...rails.values()].map(async (rail) => {
      if (!rail.facilitator.readinessProblems) return;
      try {
        for (const problem of await rail.facilitator.readinessProblems(rail.payTo)) log.error({ network: rail.network.name }, `NOT READY: ${problem}`);
      } catch (error) {
        // one readable line (no stack): the usual cause is an RPC that cannot be reached; GET /readyz says when it is back
        log.warn({ network: rail.network.name }, `could not check that ${rail.network.name} is ready to be paid: ${shortReason(error)}`);
      }
    }),
  );
}

/** The first line of an error and of its cause (viem and fetch put the reason there), never a stack. */
function shortReason(error: unknown): string {
  const { message, details, cause } = error as { message?: string; details?: string; cause?: { message?: string; code?: string } };
  const first = (details ?? message ?? String(error)).split('\n')[0];
  const why = cause?.code ?? cause?.message?.split('\n')[0];
  return why && !first!.includes(why) ? `${first} (${why})` : first!;
}
