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
        log.warn({ network: rail.network.name, err: error }, 'could not check that this network is ready to be paid');
      }
    }),
  );
}
