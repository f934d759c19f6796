// Whether a rail offers `upto`, decided at startup: a local EVM facilitator offers it where Permit2 and the
// upto proxy have code on the chain (eth_getCode), unless the operator's config forces it on or off.
import type { Logger } from 'pino';
import { gasSponsoringDeclarations } from '../x402/upto.ts';
import type { LocalEvmUptoFacilitator } from './facilitators/local-evm-upto.ts';
import type { UptoOffer } from './rails.ts';

export type UptoMode = 'auto' | 'on' | 'off';

export async function localUptoOffer(
  facilitator: LocalEvmUptoFacilitator,
  mode: UptoMode,
  network: string,
  log?: Logger,
): Promise<UptoOffer | undefined> {
  if (mode === 'off') return undefined;
  if (mode === 'auto') {
    const deployed = await facilitator.contractsDeployed().catch(() => false);
    if (!deployed) {
      log?.info({ network }, 'upto not offered: Permit2 or the upto proxy has no code on this chain (or its RPC did not answer)');
      return undefined;
    }
  }
  return { facilitator, extra: await facilitator.requirementExtra(), extensions: gasSponsoringDeclarations() };
}
