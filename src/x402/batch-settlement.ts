// The x402 `batch-settlement` scheme on EVM (x402 v2 only): payment channels. What the official @x402/evm 2.27
// client sends (deposit, voucher and refund payloads), the names the scheme uses, and the one place the channel
// id is checked against its config. The shapes are the installed package's (its types-*.d.mts).
import { z } from 'zod';
import { bytesToHex, getAddress, hashDomain, hexToBytes, isAddressEqual, keccak256, toBytes, type Address, type Hex } from 'viem';
import { signedBy } from './eoa-signature.ts';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN } from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';

export const BATCH_SETTLEMENT_SCHEME = 'batch-settlement';
export const BATCH_SETTLEMENT_CONTRACT: Address = BATCH_SETTLEMENT_ADDRESS as Address;
/** the scheme's bounds on a channel's withdraw delay (seconds) */
export const MIN_WITHDRAW_DELAY = 900;
export const MAX_WITHDRAW_DELAY = 2_592_000;

/** The scheme's error names the official client reacts to. */
export const CUMULATIVE_MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
export const CHANNEL_BUSY = 'invalid_batch_settlement_evm_channel_busy';
export const INVALID_VOUCHER_SIGNATURE = 'invalid_batch_settlement_evm_voucher_signature';
export const CUMULATIVE_EXCEEDS_BALANCE = 'invalid_batch_settlement_evm_cumulative_exceeds_balance';
export const CUMULATIVE_BELOW_CLAIMED = 'invalid_batch_settlement_evm_cumulative_below_claimed';
/** a voucher whose ceiling a charge was already made at (ours: the official server charges whole prices, where none can recur) */
export const VOUCHER_ALREADY_USED = 'invalid_batch_settlement_evm_voucher_already_used';
export const REFUND_PAYLOAD = 'invalid_batch_settlement_evm_refund_payload';
export const REFUND_NO_BALANCE = 'invalid_batch_settlement_evm_refund_no_balance';
export const REFUND_AMOUNT_INVALID = 'invalid_batch_settlement_evm_refund_amount_invalid';

// read as its checksummed form: a mixed-case address is an EIP-55 checksum, which a client may get wrong or a
// tamperer alter, and viem refuses to hash or compare a wrong one; the address is the same 20 bytes either way
const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address')
  .transform((address) => getAddress(address.toLowerCase()));
const bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 32-byte hex value');
const uintString = z.string().regex(/^\d{1,39}$/, 'an unsigned integer string');
const signature = z.string().regex(/^0x[0-9a-fA-F]{2,8192}$/, 'a hex signature');

export const channelConfigSchema = z.object({
  payer: evmAddress,
  payerAuthorizer: evmAddress,
  receiver: evmAddress,
  receiverAuthorizer: evmAddress,
  token: evmAddress,
  withdrawDelay: z.number().int().min(0).max(2 ** 40 - 1),
  salt: bytes32,
});
export type ChannelConfig = z.infer<typeof channelConfigSchema>;

const voucherSchema = z.object({ channelId: bytes32, maxClaimableAmount: uintString, signature });

export const depositPayloadSchema = z.object({
  type: z.literal('deposit'),
  channelConfig: channelConfigSchema,
  voucher: voucherSchema,
  deposit: z.object({
    amount: uintString,
    authorization: z.object({
      erc3009Authorization: z
        .object({ validAfter: uintString, validBefore: uintString, salt: z.string().max(80), signature })
        .optional(),
      permit2Authorization: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
});

export const voucherPayloadSchema = z.object({
  type: z.literal('voucher'),
  channelConfig: channelConfigSchema,
  voucher: voucherSchema,
});

export const refundPayloadSchema = z.object({
  type: z.literal('refund'),
  channelConfig: channelConfigSchema,
  voucher: voucherSchema,
  amount: uintString.optional(),
});

export const channelPayloadSchema = z.discriminatedUnion('type', [depositPayloadSchema, voucherPayloadSchema, refundPayloadSchema]);
/** What a payer sends: a deposit (with its first voucher), a voucher, or a refund voucher. */
export type ChannelPayload = z.infer<typeof channelPayloadSchema>;
export type DepositPayload = z.infer<typeof depositPayloadSchema>;
export type RefundPayload = z.infer<typeof refundPayloadSchema>;

/** One voucher claimed up to `totalClaimed`, as claim batches and refunds carry it. */
export interface VoucherClaim {
  voucher: { channel: ChannelConfig; maxClaimableAmount: string };
  signature: string;
  totalClaimed: string;
}

/** What the receiver side submits on chain through a facilitator's settle. */
export type ChannelSubmission =
  /** the payer's deposit (its voucher is committed by the gate, not submitted) */
  | DepositPayload
  /** a cooperative refund at the escrow's refund nonce, claiming what was charged in the same transaction */
  | (RefundPayload & { amount: string; refundNonce: string; claims: VoucherClaim[] })
  /** charged vouchers of many channels, claimed in one claimWithSignature */
  | { type: 'claim'; claims: VoucherClaim[] }
  /** claimed funds swept to the receiver */
  | { type: 'settle'; receiver: string; token: string };

/** The escrow's fields of one channel. */
export interface OnChainChannel {
  balance: bigint;
  totalClaimed: bigint;
  /** when the payer started a withdrawal (unix seconds), 0 when none is pending */
  withdrawRequestedAt: number;
  refundNonce: bigint;
  /** the pending withdrawal's amount, where the facilitator reads it (undefined: not known) */
  withdrawAmount?: bigint;
}

/**
 * The most a voucher of this channel can be claimed for, whatever the payer does next: the balance, less a pending
 * withdrawal (paid out once its delay is over, from what is not claimed by then; the whole unclaimed balance when
 * its amount is not known).
 */
export function stillPayable(state: OnChainChannel): bigint {
  if (state.withdrawRequestedAt === 0) return state.balance;
  const unclaimed = state.balance > state.totalClaimed ? state.balance - state.totalClaimed : 0n;
  const leaving = state.withdrawAmount !== undefined && state.withdrawAmount < unclaimed ? state.withdrawAmount : unclaimed;
  return state.balance - leaving;
}

/** The channel snapshot the scheme's facilitators answer with (a verify response's `extra`, a settle response's `extra.channelState`). */
export function channelStateFromWire(value: unknown): OnChainChannel | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const uint = (x: unknown) => (typeof x === 'string' && /^\d{1,39}$/.test(x) ? BigInt(x) : typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? BigInt(x) : undefined);
  const balance = uint(v.balance);
  const totalClaimed = uint(v.totalClaimed);
  const withdrawRequestedAt = uint(v.withdrawRequestedAt ?? 0);
  const refundNonce = uint(v.refundNonce ?? '0');
  if (balance === undefined || totalClaimed === undefined || withdrawRequestedAt === undefined || refundNonce === undefined) return undefined;
  return { balance, totalClaimed, withdrawRequestedAt: Number(withdrawRequestedAt), refundNonce };
}

/** configs whose channel id is kept: a channel's every voucher carries the same config (oldest dropped beyond it) */
const MAX_CHANNEL_IDS = 10_000;
const channelIds = new Map<string, Hex>();

/** The channel id of a config on a chain: the EIP-712 hash under the escrow's domain (as the official client computes it). */
export function channelIdOf(config: ChannelConfig, chainId: number): Hex {
  // every field that goes into the hash, in a fixed order: the same key is the same id
  const key = [chainId, config.payer, config.payerAuthorizer, config.receiver, config.receiverAuthorizer, config.token, config.withdrawDelay, config.salt]
    .join(':')
    .toLowerCase();
  const known = channelIds.get(key);
  if (known) return known;
  const id = computeChannelId(config as Parameters<typeof computeChannelId>[0], chainId).toLowerCase() as Hex;
  if (channelIds.size >= MAX_CHANNEL_IDS) channelIds.delete(channelIds.keys().next().value!);
  channelIds.set(key, id);
  return id;
}

/** What the server offers payers to build their channel with (a requirement's `extra` beside the token's EIP-712 domain). */
export interface ChannelTerms {
  receiver: string;
  receiverAuthorizer: string;
  token: string;
  withdrawDelay: number;
}

/** Why `config` (claimed to hash to `channelId`) cannot be a channel to us, or undefined when it can. */
export function configMismatch(config: ChannelConfig, channelId: string, chainId: number, terms: ChannelTerms): string | undefined {
  if (channelIdOf(config, chainId) !== channelId.toLowerCase()) return 'invalid_batch_settlement_evm_channel_id_mismatch';
  if (!isAddressEqual(config.receiver as Address, terms.receiver as Address)) return 'invalid_batch_settlement_evm_receiver_mismatch';
  if (!isAddressEqual(config.receiverAuthorizer as Address, terms.receiverAuthorizer as Address)) {
    return 'invalid_batch_settlement_evm_receiver_authorizer_mismatch';
  }
  if (!isAddressEqual(config.token as Address, terms.token as Address)) return 'invalid_batch_settlement_evm_token_mismatch';
  if (config.withdrawDelay !== terms.withdrawDelay) return 'invalid_batch_settlement_evm_withdraw_delay_mismatch';
  return undefined;
}

/**
 * Whether `signature` is the channel's voucher for `maxClaimableAmount`, signed by its payer authorizer (an EOA
 * committed in the config): an ECDSA recovery, no RPC. Vouchers of a config without one (EIP-1271 smart wallets)
 * are checked by the facilitator instead.
 */
export function voucherSignedByAuthorizer(
  config: ChannelConfig,
  channelId: string,
  maxClaimableAmount: bigint,
  voucherSignature: string,
  chainId: number,
): boolean {
  try {
    return signedBy(config.payerAuthorizer as Address, voucherDigest(channelId as Hex, maxClaimableAmount, chainId), voucherSignature as Hex);
  } catch {
    return false;
  }
}

/** keccak256 of the voucher's EIP-712 type, `Voucher(bytes32 channelId,uint128 maxClaimableAmount)` */
const VOUCHER_TYPE_HASH = keccak256(toBytes('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'), 'bytes');

/**
 * The EIP-712 digest a voucher signs (what hashTypedData computes for it), from the escrow's domain separator hashed
 * once per chain and the voucher's two words: a signer and a verifier hash only these per call (two keccaks over
 * bytes, ~25 us, against ~50 us through hex and ~200 us for hashTypedData).
 */
export function voucherDigestBytes(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Uint8Array {
  const struct = new Uint8Array(96);
  struct.set(VOUCHER_TYPE_HASH, 0);
  struct.set(hexToBytes(channelId), 32);
  // the amount as a big-endian uint256 word
  let amount = maxClaimableAmount;
  for (let i = 95; i >= 64 && amount > 0n; i--, amount >>= 8n) struct[i] = Number(amount & 0xffn);
  const digest = new Uint8Array(66);
  digest[0] = 0x19;
  digest[1] = 0x01;
  digest.set(escrowDomainSeparator(chainId), 2);
  digest.set(keccak256(struct, 'bytes'), 34);
  return keccak256(digest, 'bytes');
}

export function voucherDigest(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Hex {
  return bytesToHex(voucherDigestBytes(channelId, maxClaimableAmount, chainId));
}

/** the fields of the escrow's domain (BATCH_SETTLEMENT_DOMAIN with the chain and the contract) */
const ESCROW_DOMAIN_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
} as const;
const domainSeparators = new Map<number, Uint8Array>();

/** The escrow's EIP-712 domain on a chain: what vouchers, claim batches and refunds are signed under. */
export function escrowDomain(chainId: number) {
  return { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: getAddress(BATCH_SETTLEMENT_CONTRACT) };
}

/** The escrow's EIP-712 domain separator on a chain (constant: the vouchers of every channel there share it). */
function escrowDomainSeparator(chainId: number): Uint8Array {
  let separator = domainSeparators.get(chainId);
  if (!separator) {
    separator = hexToBytes(hashDomain({ domain: { ...escrowDomain(chainId), chainId: BigInt(chainId) }, types: ESCROW_DOMAIN_TYPES }));
    domainSeparators.set(chainId, separator);
  }
  return separator;
}

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
