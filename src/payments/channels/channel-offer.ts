// Whether a rail offers payment channels (x402 `batch-settlement`), decided at startup, and the check readiness
// repeats: a local facilitator offers them where the escrow and its collectors have code (eth_getCode).
import type { Logger } from 'pino';
import { MAX_WITHDRAW_DELAY, MIN_WITHDRAW_DELAY } from '../../x402/batch-settlement.ts';
import { EIP2612_GAS_SPONSORING, gasSponsoringDeclarations } from '../../x402/gas-sponsoring.ts';
import type { ChannelOffer } from '../rails.ts';
import type { ChannelFacilitator } from './channel-facilitator.ts';

export type ChannelMode = 'auto' | 'on' | 'off';
/** how payers deposit: the token's ERC-3009 receiveWithAuthorization, or a Permit2 witness transfer */
export type DepositMethod = 'eip3009' | 'permit2';

/** The withdraw delay channels are opened with unless configured: the scheme's minimum, 15 minutes. */
export const DEFAULT_WITHDRAW_DELAY = MIN_WITHDRAW_DELAY;

const STARTUP_CHECK_MS = 5_000;

export async function channelOffer(
  facilitator: ChannelFacilitator,
  options: { mode: ChannelMode; network: string; withdrawDelay?: number; depositMethod?: DepositMethod; log?: Logger },
): Promise<ChannelOffer | undefined> {
  if (options.mode === 'off') return undefined;
  const withdrawDelay = options.withdrawDelay ?? DEFAULT_WITHDRAW_DELAY;
  if (!Number.isInteger(withdrawDelay) || withdrawDelay < MIN_WITHDRAW_DELAY || withdrawDelay > MAX_WITHDRAW_DELAY) {
    throw new Error(`withdrawDelay must be whole seconds from ${MIN_WITHDRAW_DELAY} to ${MAX_WITHDRAW_DELAY}`);
  }
  if (options.mode === 'auto') {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([`an answer from the RPC in ${STARTUP_CHECK_MS} ms`]), STARTUP_CHECK_MS);
    });
    const missing = await Promise.race([facilitator.missingContracts().catch((error: unknown) => [`an answer from the RPC (${(error as Error).message.split('\n')[0]})`]), timeout]).finally(() =>
      clearTimeout(timer),
    );
    if (missing.length > 0) {
      options.log?.info({ network: options.network }, `batch-settlement not offered on ${options.network}: no code at ${missing.join(', ')}`);
      return undefined;
    }
  }
  const permit2 = options.depositMethod === 'permit2';
  return {
    facilitator,
    withdrawDelay,
    // the official client deposits by ERC-3009 unless `assetTransferMethod` says permit2
    extra: { receiverAuthorizer: facilitator.receiverAuthorizer, withdrawDelay, ...(permit2 ? { assetTransferMethod: 'permit2' } : {}) },
    // a payer whose Permit2 allowance is short signs an EIP-2612 permit only where the 402 declares it
    extensions: permit2 && facilitator.sponsorsPermits ? gasSponsoringDeclarations([EIP2612_GAS_SPONSORING]) : {},
    async check() {
      const missing = await facilitator.missingContracts();
      if (missing.length > 0) throw new Error(`no code at ${missing.join(', ')}`);
    },
  };
}
