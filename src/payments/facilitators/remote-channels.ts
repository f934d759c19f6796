// Payment channels (x402 batch-settlement) through a remote x402 facilitator whose GET /supported lists
// `batch-settlement` for our network. Receiver authorization is either delegated to it (the `receiverAuthorizer`
// its /supported lists signs claim batches and refunds; we send them without signatures, as the spec allows) or
// kept (our own key is the channels' receiverAuthorizer and signs them here, receiver-authorizer.ts). Deposits, claims,
// settles and refunds are its POST /settle; vouchers its POST /verify. We hold no chain access for it: the
// escrow's state of a channel is read through /verify of the channel's latest voucher as a zero-charge refund
// voucher (which the spec's facilitator answers with the channel snapshot), and what is left to settle is not
// asked (the claimer settles after each claim and whenever the ledger knows claims not yet settled).
import { z } from 'zod';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { EvmNetwork, Network } from '../../x402/networks.ts';
import type { PaymentRequirement } from '../../x402/model.ts';
import { v2PaymentPayload, v2Requirements } from '../../x402/v2/codec.ts';
import { BATCH_SETTLEMENT_SCHEME, channelStateFromWire, type ChannelSubmission } from '../../x402/batch-settlement.ts';
import { withReceiverSignatures } from '../channels/receiver-authorizer.ts';
import { EIP2612_GAS_SPONSORING } from '../../x402/gas-sponsoring.ts';
import type { ChannelStore } from '../../store/channel-store.ts';
import type { ChannelFacilitator, ChannelProof, ChannelSettleResult, ChannelVerifyResult, OnChainChannel } from '../channels/channel-facilitator.ts';

export interface RemoteChannelFacilitatorOptions {
  url: string;
  network: Network;
  /** sent as the Authorization header: how the facilitator knows refunds come from us (the spec requires it) */
  authorization?: string;
  timeoutMs: number;
  /** the channels' receiverAuthorizer: the one its /supported lists (delegated), or `receiverKey`'s address (kept) */
  receiverAuthorizer: string;
  /** kept receiver authorization: the key that signs claims and refunds before they are sent */
  receiverKey?: PrivateKeyAccount;
  /** its /supported lists eip2612GasSponsoring */
  sponsorsPermits?: boolean;
  /** where the latest voucher of a channel is read from, to ask the facilitator about the channel */
  store?: () => ChannelStore | undefined;
}

const verifyResponse = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().nullish(),
  payer: z.string().nullish(),
  extra: z.unknown().optional(),
});
const settleResponse = z.object({
  success: z.boolean(),
  errorReason: z.string().nullish(),
  transaction: z.string().nullish(),
  amount: z.string().nullish(),
  extra: z.record(z.string(), z.unknown()).nullish(),
});
const supportedResponse = z.object({
  kinds: z.array(z.object({ x402Version: z.number(), scheme: z.string(), network: z.string(), extra: z.record(z.string(), z.unknown()).nullish() })),
  extensions: z.array(z.string()).nullish(),
});

async function call(options: Pick<RemoteChannelFacilitatorOptions, 'url' | 'authorization' | 'timeoutMs'>, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (options.authorization) headers.Authorization = options.authorization;
  const response = await fetch(`${options.url.replace(/\/+$/, '')}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  const text = await response.text();
  if (response.status >= 500) throw new Error(`${path}: HTTP ${response.status}`);
  return JSON.parse(text) as unknown;
}

/**
 * Whether a remote facilitator lists batch-settlement on `network` (undefined when not), with the receiverAuthorizer
 * it offers to be, if any, and whether it carries out EIP-2612 permits (its /supported extensions).
 */
export async function remoteChannelKind(
  options: Pick<RemoteChannelFacilitatorOptions, 'url' | 'authorization' | 'timeoutMs' | 'network'>,
): Promise<{ receiverAuthorizer?: string; sponsorsPermits: boolean } | undefined> {
  const supported = supportedResponse.parse(await call(options, 'GET', '/supported'));
  const kind = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === 'batch-settlement' && k.network === options.network.caip2);
  if (!kind) return undefined;
  const sponsorsPermits = (supported.extensions ?? []).includes(EIP2612_GAS_SPONSORING);
  const authorizer = kind.extra?.receiverAuthorizer;
  return typeof authorizer === 'string' && /^0x[0-9a-fA-F]{40}$/.test(authorizer) ? { receiverAuthorizer: authorizer, sponsorsPermits } : { sponsorsPermits };
}

/** A /verify or /settle body: the payment and its requirements on the x402 v2 wire. */
function request(proof: ChannelProof<object>, requirement: PaymentRequirement) {
  return { x402Version: 2, paymentPayload: v2PaymentPayload(requirement, proof.payload, proof.extensions), paymentRequirements: v2Requirements(requirement) };
}

export class RemoteChannelFacilitator implements ChannelFacilitator {
  readonly #options: RemoteChannelFacilitatorOptions;

  constructor(options: RemoteChannelFacilitatorOptions) {
    this.#options = options;
  }

  get receiverAuthorizer(): string {
    return this.#options.receiverAuthorizer;
  }

  get sponsorsPermits(): boolean {
    return this.#options.sponsorsPermits ?? false;
  }

  async verify(proof: ChannelProof, requirement: PaymentRequirement): Promise<ChannelVerifyResult> {
    const answer = verifyResponse.parse(await call(this.#options, 'POST', '/verify', request(proof, requirement)));
    if (!answer.isValid) return { isValid: false, invalidReason: answer.invalidReason ?? 'invalid_batch_settlement_evm_payload', ...(answer.payer ? { payer: answer.payer } : {}) };
    const state = channelStateFromWire(answer.extra);
    if (!state) return { isValid: false, invalidReason: 'invalid_batch_settlement_evm_rpc_read_failed' };
    return { isValid: true, payer: answer.payer ?? '', state };
  }

  async settle(proof: ChannelProof<ChannelSubmission>, requirement: PaymentRequirement): Promise<ChannelSettleResult> {
    const key = this.#options.receiverKey;
    const payload = key ? await withReceiverSignatures(key, (this.#options.network as EvmNetwork).chainId, proof.payload) : proof.payload;
    const answer = settleResponse.parse(await call(this.#options, 'POST', '/settle', request({ ...proof, payload }, requirement)));
    if (!answer.success) {
      const reason = answer.errorReason ?? 'invalid_batch_settlement_evm_settle_failed';
      return { success: false, errorReason: reason, transaction: answer.transaction ?? '', pending: reason === 'settlement_pending' };
    }
    const state = channelStateFromWire(answer.extra?.channelState);
    const amount = answer.amount && /^\d{1,78}$/.test(answer.amount) ? BigInt(answer.amount) : undefined;
    return { success: true, transaction: answer.transaction ?? '', ...(amount !== undefined ? { amount } : {}), ...(state ? { state } : {}) };
  }

  /** Through /verify of the channel's latest voucher as a zero-charge (refund) voucher: the facilitator answers with the snapshot. */
  async readChannel(channelId: string): Promise<OnChainChannel> {
    const record = await this.#options.store?.()?.get(channelId);
    if (!record?.signature) throw new Error(`no voucher of channel ${channelId} to ask the facilitator with`);
    const requirement: PaymentRequirement = {
      scheme: BATCH_SETTLEMENT_SCHEME,
      network: this.#options.network.name,
      amount: 0n,
      asset: record.config.token,
      payTo: record.config.receiver,
      maxTimeoutSeconds: 60,
      extra: { receiverAuthorizer: record.config.receiverAuthorizer, withdrawDelay: record.config.withdrawDelay },
    };
    const payload = {
      type: 'refund' as const,
      channelConfig: record.config,
      voucher: { channelId: record.channelId, maxClaimableAmount: record.signedMaxClaimable.toString(), signature: record.signature },
    };
    const verified = await this.verify({ payload }, requirement);
    if (!verified.isValid) throw new Error(`the facilitator could not read channel ${channelId}: ${verified.invalidReason}`);
    return verified.state;
  }

  /** Not asked: the facilitator has no such read; undefined lets the claimer decide from the ledger. */
  async unsettled(): Promise<bigint | undefined> {
    return undefined;
  }

  /** The facilitator must still list batch-settlement for our network (delegated: with the same receiverAuthorizer). */
  async missingContracts(): Promise<string[]> {
    const kind = await remoteChannelKind(this.#options);
    if (!kind) return [`a batch-settlement kind for ${this.#options.network.caip2} in the facilitator's /supported`];
    if (this.#options.receiverKey) return [];
    const authorizer = kind.receiverAuthorizer;
    if (authorizer?.toLowerCase() !== this.#options.receiverAuthorizer.toLowerCase()) {
      return [`the receiverAuthorizer channels were opened with (${this.#options.receiverAuthorizer}; /supported now lists ${authorizer ?? 'none'})`];
    }
    return [];
  }
}
