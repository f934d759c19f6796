// Whether a rail offers `auth-capture`, decided at startup, and the check readiness repeats: a local EVM
// facilitator offers it where the escrow and its ERC-3009 collector have code on the chain (eth_getCode).
// The operator's config forces it on or off (the network's `authCapture` setting).
import type { Logger } from 'pino';
import { ConfigError } from '../config/load.ts';
import type { LocalEvmAuthCaptureFacilitator } from './facilitators/evm/local-evm-auth-capture.ts';
import type { SchemeOffer } from './rails.ts';
import { STARTUP_CHECK_MS, within, type OfferMode } from './upto-offer.ts';

export async function localAuthCaptureOffer(facilitator: LocalEvmAuthCaptureFacilitator, mode: OfferMode, network: string, log?: Logger): Promise<SchemeOffer | undefined> {
  if (mode === 'off') return undefined;
  const why = await within(facilitator.missingContracts(), STARTUP_CHECK_MS, 'eth_getCode').then(
    (missing) => (missing.length > 0 ? `there is no code at ${missing.join(', ')}` : undefined),
    (error: unknown) => `the chain could not be asked for its code (${(error as Error).message.split('\n')[0]})`,
  );
  if (why) {
    if (mode === 'on') throw new ConfigError(`authCapture is "on" but ${why}`);
    log?.info({ network }, `auth-capture not offered on ${network}: ${why}`);
    return undefined;
  }
  return {
    facilitator,
    extra: await facilitator.requirementExtra(),
    async check() {
      const missing = await facilitator.missingContracts();
      if (missing.length > 0) throw new Error(`no code at ${missing.join(', ')}`);
    },
  };
}
