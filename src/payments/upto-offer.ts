// Whether a rail offers `upto`, decided at startup, and the check readiness repeats.
// A local EVM facilitator offers it where Permit2 and the upto proxy have code on the chain (eth_getCode);
// a remote facilitator where its /supported lists upto for the network. The operator's config forces it on or off.
import type { Logger } from 'pino';
import { ConfigError } from '../config/load.ts';
import { gasSponsoringDeclarations } from '../x402/gas-sponsoring.ts';
import type { LocalEvmUptoFacilitator } from './facilitators/evm/local-evm-upto.ts';
import type { RemoteFacilitator } from './facilitators/remote.ts';
import type { UptoOffer } from './rails.ts';

/** A network's setting for a scheme beside exact (`upto`, `authCapture`): offered where found, required, or never. */
export type OfferMode = 'auto' | 'on' | 'off';

/** How long startup waits for one network's check (eth_getCode, or a remote's /supported) before deciding without it. */
export const STARTUP_CHECK_MS = 5_000;

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function localUptoOffer(
  facilitator: LocalEvmUptoFacilitator,
  mode: OfferMode,
  network: string,
  log?: Logger,
): Promise<UptoOffer | undefined> {
  if (mode === 'off') return undefined;
  if (mode === 'auto') {
    const missing = await within(facilitator.missingContracts(), STARTUP_CHECK_MS, 'eth_getCode').catch((error: unknown) => [
      `an answer from the RPC (${(error as Error).message.split('\n')[0]})`,
    ]);
    if (missing.length > 0) {
      log?.info({ network }, `upto not offered on ${network}: no code at ${missing.join(', ')}`);
      return undefined;
    }
  }
  return {
    facilitator,
    extra: await facilitator.requirementExtra(),
    extensions: gasSponsoringDeclarations(),
    async check() {
      const missing = await facilitator.missingContracts();
      if (missing.length > 0) throw new Error(`no code at ${missing.join(', ')}`);
    },
  };
}

/**
 * `remote` is the rail's facilitator client for the upto scheme. Offered when /supported lists upto for the
 * network with the facilitator address payers must name; the gas-sponsoring extensions declared are those it
 * lists. "on" without that stops startup (a ConfigError the caller joins with the others).
 */
export async function remoteUptoOffer(remote: RemoteFacilitator, mode: OfferMode, network: string, log?: Logger): Promise<UptoOffer | undefined> {
  if (mode === 'off') return undefined;
  const support = await within(remote.uptoSupport(), STARTUP_CHECK_MS, 'GET /supported').catch((error: unknown) => `its /supported could not be read (${(error as Error).message.split('\n')[0]})`);
  if (support === undefined || typeof support === 'string') {
    const why = support ?? 'its /supported lists no upto kind with a facilitatorAddress for this network';
    if (mode === 'on') throw new ConfigError(`upto is "on" but the remote facilitator cannot settle it: ${why}`);
    log?.info({ network }, `upto not offered on ${network}: ${why}`);
    return undefined;
  }
  return {
    facilitator: remote,
    extra: { facilitatorAddress: support.facilitatorAddress, assetTransferMethod: 'permit2' },
    extensions: gasSponsoringDeclarations(support.extensions),
    async check() {
      if (!(await remote.uptoSupport())) throw new Error('the facilitator no longer lists upto for this network in /supported');
    },
  };
}
