// Whether a rail offers `auth-capture`, decided at startup, and the check readiness repeats: a local EVM
// facilitator offers it where the escrow and its ERC-3009 collector have code on the chain (eth_getCode).
// The operator's config forces it on or off (the network's `authCapture` setting).
import type { Logger } from 'pino';
import { ConfigError } from '../config/load.ts';
import type { LocalEvmAuthCaptureFacilitator } from './facilitators/evm/local-evm-auth-capture.ts';
import type { SchemeOffer } from './rails.ts';
import { STARTUP_CHECK_MS, within, type UptoMode } from './upto-offer.ts';

export async function localAuthCaptureOffer(facilitator: LocalEvmAuthCaptureFacilitator, mode: UptoMode, network: string, log?: Logger): Promise<SchemeOffer | undefined> {
  if (mode === 'off') return undefined;
  const missing = await within(facilitator.missingContracts(), STARTUP_CHECK_MS, 'eth_getCode').catch((error: unknown) => [
    `an answer from the RPC (${(error as Error).message.split('\n')[0]})`,
  ]);
  if (missing.length > 0) {
    if (mode === 'on') throw new ConfigError(`authCapture is "on" but there is no code at ${missing.join(', ')}`);
    log?.info({ network }, `auth-capture not offered on ${network}: no code at ${missing.join(', ')}`);
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
