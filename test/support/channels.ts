// Payment channels (x402 batch-settlement) in tests: a payer's channel to a gateway's rail as the official client
// builds it (its config is public: the payer, the gateway's terms, a zero salt), the official client paying on it,
// and the on-chain account of a channel once a test is over.
import assert from 'node:assert/strict';
import { BatchSettlementEvmScheme, computeChannelId } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { createPublicClient, http, parseAbi, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { BATCH_SETTLEMENT_CONTRACT } from '../../src/x402/batch-settlement.ts';
import type { PaymentRail } from '../../src/payments/rails.ts';
import type { ChannelStore } from '../../src/store/channel-store.ts';
import type { ChannelClaimer } from '../../src/payments/channels/channel-claimer.ts';

/** The escrow's functions the tests read and call: a channel's balance, a receiver's account, a payer's withdrawal. */
export const ESCROW_ABI = parseAbi([
  'function channels(bytes32) view returns (uint128 balance, uint128 totalClaimed)',
  'function receivers(address, address) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function balanceOf(address) view returns (uint256)',
  'function initiateWithdraw((address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt) config, uint128 amount)',
  'function finalizeWithdraw((address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt) config)',
]);

/** The channel `payer` opens to the rail's gateway with the official client's defaults, and its id on base (8453). */
export function channelOf(rail: PaymentRail, payer: string, overrides: { salt?: Hex; withdrawDelay?: number } = {}) {
  const config = {
    payer: payer as Hex,
    payerAuthorizer: payer as Hex,
    receiver: rail.payTo as Hex,
    receiverAuthorizer: rail.channels!.facilitator.receiverAuthorizer as Hex,
    token: rail.asset as Hex,
    withdrawDelay: overrides.withdrawDelay ?? 900,
    salt: overrides.salt ?? (`0x${'00'.repeat(32)}` as Hex),
  };
  return { config, channelId: computeChannelId(config, 8453).toLowerCase() as Hex };
}

/**
 * The official client paying `buyer`'s channel on base (`X-Network: base`), depositing `deposit` when it opens one;
 * every 200's charge (its receipt's `extra.chargedAmount`) is kept in `charges`. `via` sees every request it sends.
 */
export function officialChannelPayer(buyer: PrivateKeyAccount, rpcUrl: string, deposit: bigint, via: typeof fetch = fetch) {
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer, createPublicClient({ transport: http(rpcUrl) })), { depositStrategy: () => deposit.toString() });
  const paying = wrapFetchWithPayment(via, new x402Client().register('eip155:8453', scheme));
  const withNetwork: typeof fetch = (input, init) => via(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-Network': 'base' } });
  const charges: bigint[] = [];
  return {
    scheme,
    charges,
    async pay(origin: string, endpoint: { path: string; body: unknown }, signal?: AbortSignal): Promise<Response> {
      const response = await paying(`${origin}${endpoint.path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
        body: JSON.stringify(endpoint.body),
        ...(signal ? { signal } : {}),
      });
      const receipt = response.status === 200 ? response.headers.get('PAYMENT-RESPONSE') : null;
      if (receipt) charges.push(BigInt((JSON.parse(Buffer.from(receipt, 'base64').toString('utf8')) as { extra: { chargedAmount: string } }).extra.chargedAmount));
      return response;
    },
    refund: (url: string, amount?: string) => scheme.refund(url, { fetch: withNetwork, ...(amount ? { amount } : {}) }),
  };
}

export interface ChannelAccounting {
  rail: PaymentRail;
  rpcUrl: string;
  store: ChannelStore;
  claimer: ChannelClaimer;
  /** what each payer was funded with */
  funds: bigint;
}

/**
 * The money after a test, on-chain: the ledger charged exactly what the payer's 200s said; once claimed (a forced
 * round), the escrow holds exactly that as claimed from the payer, who has every other unit (in its wallet or its
 * channel), and the payee was paid exactly what was claimed. So: no payer charged without a usable 200, no 200
 * uncharged, nothing charged twice.
 */
export async function accountFor(accounting: ChannelAccounting, payer: string, charges: bigint[]): Promise<void> {
  const { rail, store, claimer, funds } = accounting;
  const chain = createPublicClient({ transport: http(accounting.rpcUrl) });
  const token = rail.asset as Hex;
  const balanceOf = (owner: string) => chain.readContract({ address: token, abi: ESCROW_ABI, functionName: 'balanceOf', args: [owner as Hex] });
  const receivers = () => chain.readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'receivers', args: [rail.payTo as Hex, token] });
  const { channelId } = channelOf(rail, payer);
  const sum = charges.reduce((a, b) => a + b, 0n);
  assert.equal((await store.get(channelId))?.chargedCumulative ?? 0n, sum, 'charged exactly what the 200s were charged');
  const [, settledBefore] = await receivers();
  const payeeBefore = await balanceOf(rail.payTo);
  await claimer.round({ force: true });
  const [balance, totalClaimed] = await chain.readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: ESCROW_ABI, functionName: 'channels', args: [channelId] });
  assert.equal(totalClaimed, sum, 'claimed from the payer: exactly its charges');
  assert.equal((await balanceOf(payer)) + balance - totalClaimed, funds - sum, 'the payer keeps every other unit');
  const [claimedAfter, settledAfter] = await receivers();
  assert.equal(settledAfter, claimedAfter, 'every claim swept to the payee');
  assert.equal((await balanceOf(rail.payTo)) - payeeBefore, settledAfter - settledBefore, 'the payee got exactly what was claimed');
}
