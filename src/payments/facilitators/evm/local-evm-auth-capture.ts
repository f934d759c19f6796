// Verifies and settles x402 `auth-capture` EVM payments ourselves, as the operator the payer's terms name (our
// settlement key): the payer signed an ERC-3009 ReceiveWithAuthorization of the price to Commerce Payments'
// ERC-3009 collector, its nonce the hash of our terms (src/x402/auth-capture.ts). Settling is one escrow
// `charge` from our key after the work (authorize and capture at once, to payTo, no fee): the collector pulls the
// authorization and the escrow pays the receiver. Verification rebuilds the terms from our own requirement, so
// a payer who signed for another operator, receiver, amount, fee or escrow fails before the chain is asked; a
// simulated charge from our key covers what only the chain knows (balance, a used nonce, the token's rules).
import { evmChainClient } from './chain-client.ts';
import {
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  hashTypedData,
  isAddressEqual,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Chain,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from 'viem';
import { signedBy } from '../../../x402/eoa-signature.ts';
import { libsecp256k1Account } from '../../../x402/libsecp256k1-account.ts';
import type { EvmNetwork } from '../../../x402/networks.ts';
import type { PaymentProof, PaymentRequirement } from '../../../x402/model.ts';
import {
  AUTH_CAPTURE_EIP3009_COLLECTOR,
  AUTH_CAPTURE_ESCROW,
  AUTH_CAPTURE_SCHEME,
  authCaptureEscrowAbi,
  authCapturePayloadSchema,
  authCaptureTerms,
  payerAgnosticHash,
  paymentInfoHash,
  paymentInfoOf,
  type AuthCaptureTerms,
  type PaymentInfo,
} from '../../../x402/auth-capture.ts';
import { FacilitatorUnavailableError, failedSettlement, refused, type Facilitator, type Refused, type SettleOutcome, type VerifyResult } from '../../facilitator.ts';
import { receiveWithAuthorizationTypes } from './eip3009-abi.ts';
import { isRevert, reasonForRevert, settlementUnavailable, shortMessage } from './evm-errors.ts';
import { evmSender, type EvmSender } from './evm-sender.ts';
import { sendAndWatch } from './evm-settlement-batcher.ts';
import { settlementFromChain } from './evm-settlement-check.ts';
import { INVALID_PAYMENT_REQUIREMENTS, SETTLEMENT_PENDING, SETTLEMENT_RECEIPT_TIMEOUT, SETTLEMENT_REPLACED } from '../../reasons.ts';
import {
  AUTH_CAPTURE_SIMULATION_FAILED,
  AUTH_CAPTURE_TRANSACTION_FAILED,
  INVALID_AUTH_CAPTURE_COLLECTOR,
  INVALID_AUTH_CAPTURE_NETWORK,
  INVALID_AUTH_CAPTURE_PAYLOAD,
  INVALID_AUTH_CAPTURE_SCHEME,
  INVALID_AUTH_CAPTURE_SIGNATURE,
  INVALID_AUTH_CAPTURE_TERMS,
  INVALID_AUTH_CAPTURE_VALID_AFTER,
  INVALID_AUTH_CAPTURE_VALID_BEFORE,
  INVALID_AUTH_CAPTURE_VALUE,
} from './auth-capture-reasons.ts';

export interface LocalEvmAuthCaptureFacilitatorOptions {
  network: EvmNetwork;
  rpcUrl: string;
  /** the operator: named in the terms the payer signs, the only key the escrow lets charge them */
  settlementPrivateKey: Hex;
  /** the USDC contract this facilitator accepts */
  asset: Address;
  /** the asset's EIP-712 domain name and version */
  eip712: { name: string; version: string };
  receiptTimeoutMs: number;
  pollingIntervalMs?: number;
  /** the key's transaction sender, shared with the exact facilitator so their nonces never collide */
  sender?: EvmSender;
  now?: () => number;
}

/** x402 clients sign validBefore = now + maxTimeoutSeconds; we need this much of it left to settle. */
const MIN_SECONDS_LEFT = 6n;
/** Gas limit = the simulation's estimate plus a quarter: storage the charge touches may be colder by then. */
const GAS_MARGIN_PERCENT = 125n;

interface Checked {
  info: PaymentInfo;
  /** the payment's id at the escrow (its terms' hash with the payer) */
  id: Hex;
  signature: Hex;
}

type Verified = { ok: true; checked: Checked; gas: bigint } | Refused;
type CheckedOffChain = { ok: true; checked: Checked } | Refused;

const paymentChargedEvent = {
  type: 'event',
  name: 'PaymentCharged',
  inputs: [
    { name: 'paymentInfoHash', type: 'bytes32', indexed: true },
    { name: 'paymentInfo', type: 'tuple', components: authCaptureEscrowAbi[0].inputs[0].components },
    { name: 'amount', type: 'uint256', indexed: false },
    { name: 'tokenCollector', type: 'address', indexed: false },
    { name: 'feeBps', type: 'uint16', indexed: false },
    { name: 'feeReceiver', type: 'address', indexed: false },
  ],
} as const;

export class LocalEvmAuthCaptureFacilitator implements Facilitator {
  readonly #network: EvmNetwork;
  readonly #asset: Address;
  readonly #eip712: { name: string; version: string };
  readonly #receiptTimeoutMs: number;
  readonly #pollingIntervalMs: number;
  readonly #now: () => number;
  readonly #account: PrivateKeyAccount;
  readonly #public: PublicClient<Transport, Chain>;
  readonly #sender: EvmSender;
  readonly #terms: AuthCaptureTerms;

  constructor(options: LocalEvmAuthCaptureFacilitatorOptions) {
    this.#network = options.network;
    this.#asset = options.asset;
    this.#eip712 = { name: options.eip712.name, version: options.eip712.version };
    this.#receiptTimeoutMs = options.receiptTimeoutMs;
    this.#pollingIntervalMs = options.pollingIntervalMs ?? 1000;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#account = libsecp256k1Account(options.settlementPrivateKey);
    this.#public = evmChainClient(options.network, options.rpcUrl, this.#pollingIntervalMs);
    this.#sender = options.sender ?? evmSender({ client: this.#public, account: this.#account, chainId: options.network.chainId });
    if (!isAddressEqual(this.#sender.address, this.#account.address)) throw new Error('the sender must send from the settlement key');
    this.#terms = authCaptureTerms(this.#account.address);
  }

  /** `extra` of an auth-capture requirement: our terms (the token's EIP-712 domain comes from the exact rail's extra). */
  async requirementExtra(): Promise<Record<string, unknown>> {
    return { ...this.#terms };
  }

  /** Which of the escrow and its ERC-3009 collector have no code on this chain, named with their addresses. */
  async missingContracts(): Promise<string[]> {
    const contracts = [
      ['the auth-capture escrow', AUTH_CAPTURE_ESCROW],
      ['its ERC-3009 collector', AUTH_CAPTURE_EIP3009_COLLECTOR],
    ] as const;
    const codes = await Promise.all(contracts.map(([, address]) => this.#public.getCode({ address })));
    return contracts.filter((_, i) => !codes[i] || codes[i] === '0x').map(([name, address]) => `${name} (${address})`);
  }

  async verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<VerifyResult> {
    const verified = await this.#verify(proof, requirement);
    return verified.ok ? { isValid: true, payer: verified.checked.info.payer } : verified.result;
  }

  /** One escrow `charge` of the price, after a full verification (settle never trusts that verify ran). */
  async settle(proof: PaymentProof, requirement: PaymentRequirement): Promise<SettleOutcome> {
    let verified: Verified;
    try {
      verified = await this.#verify(proof, requirement);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return { status: 'unavailable', reason: settlementUnavailable(error) };
      throw error;
    }
    if (!verified.ok) return failedSettlement(verified.result);
    const { checked, gas } = verified;
    const payer = checked.info.payer;
    const call = { to: AUTH_CAPTURE_ESCROW, data: encodeFunctionData({ abi: authCaptureEscrowAbi, functionName: 'charge', args: chargeArgs(checked) }), gas: (gas * GAS_MARGIN_PERCENT) / 100n };
    const sent = await sendAndWatch(this.#sender, call, this.#receiptTimeoutMs, this.#pollingIntervalMs);
    if (sent.status === 'rejected') {
      // only a revert is the payment's fault: anything else left its authorization unused and good
      if (isRevert(sent.error)) return { status: 'failed', reason: reasonFor(sent.error, AUTH_CAPTURE_TRANSACTION_FAILED), payer };
      return { status: 'unavailable', reason: settlementUnavailable(sent.error), payer };
    }
    if (sent.status === 'uncertain') return { status: 'unknown', reason: `broadcast_uncertain: ${shortMessage(sent.error)}`, payer, transaction: sent.transaction };
    const { watched } = sent;
    if (watched.status === 'mined') {
      return charged(watched.receipt, checked.id)
        ? { status: 'settled', transaction: sent.transaction, payer }
        : { status: 'failed', reason: AUTH_CAPTURE_TRANSACTION_FAILED, payer, transaction: sent.transaction };
    }
    // broadcast but unconfirmed, or replaced: it may still land (or another did), so never reported as a failure
    return { status: 'unknown', reason: watched.status === 'timeout' ? SETTLEMENT_RECEIPT_TIMEOUT : SETTLEMENT_REPLACED, payer, transaction: sent.transaction };
  }

  /** For reconciliation: the escrow says whether this payment was collected, whichever transaction did it. */
  async checkSettlement(proof: PaymentProof, requirement: PaymentRequirement, transaction: string): Promise<SettleOutcome> {
    const checked = this.#checkOffChain(proof, requirement, { clock: false, signature: false });
    if (!checked.ok) return { status: 'failed', reason: checked.result.invalidReason };
    const { info, id } = checked.checked;
    return settlementFromChain({
      client: this.#public,
      payer: info.payer,
      transaction,
      nonceUsed: async (blockNumber) => {
        const [collected] = await this.#public.readContract({ address: AUTH_CAPTURE_ESCROW, abi: authCaptureEscrowAbi, functionName: 'paymentState', args: [id], blockNumber });
        return collected;
      },
      // past preApprovalExpiry the escrow takes the authorization no more
      expired: (timestamp) => timestamp >= BigInt(info.preApprovalExpiry),
      revertedReason: AUTH_CAPTURE_TRANSACTION_FAILED,
      expiredReason: INVALID_AUTH_CAPTURE_VALID_BEFORE,
      carried: (receipt) => charged(receipt, id),
      rebroadcast: () => this.#sender.rebroadcast(),
      // one new charge per payment at a time: a check made while it waits for its receipt says pending
      resettle: () => {
        if (this.#chargingAnew.has(id)) return Promise.resolve<SettleOutcome>({ status: 'unknown', reason: SETTLEMENT_PENDING, payer: info.payer, transaction });
        this.#chargingAnew.add(id);
        return this.settle(proof, requirement).finally(() => this.#chargingAnew.delete(id));
      },
    });
  }

  /** payments (their escrow ids) being charged anew by a reconciliation check (see checkSettlement) */
  readonly #chargingAnew = new Set<Hex>();

  async #verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<Verified> {
    const offChain = this.#checkOffChain(proof, requirement);
    if (!offChain.ok) return offChain;
    try {
      const gas = await this.#public.estimateContractGas({
        account: this.#account,
        address: AUTH_CAPTURE_ESCROW,
        abi: authCaptureEscrowAbi,
        functionName: 'charge',
        args: chargeArgs(offChain.checked),
      });
      return { ok: true, checked: offChain.checked, gas };
    } catch (error) {
      // the RPC failed us: no verdict on the payment, which may well be fine
      if (!isRevert(error)) throw new FacilitatorUnavailableError(`${this.#network.name} auth-capture verification`, error);
      return refused(reasonFor(error, AUTH_CAPTURE_SIMULATION_FAILED), offChain.checked.info.payer);
    }
  }

  #checkOffChain(proof: PaymentProof, requirement: PaymentRequirement, options = { clock: true, signature: true }): CheckedOffChain {
    const parsed = authCapturePayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return refused(INVALID_AUTH_CAPTURE_PAYLOAD);
    const { authorization: a, signature } = parsed.data;
    const payer = a.from;
    if (proof.scheme !== AUTH_CAPTURE_SCHEME || requirement.scheme !== AUTH_CAPTURE_SCHEME) return refused(INVALID_AUTH_CAPTURE_SCHEME, payer);
    if (proof.network !== requirement.network || requirement.network !== this.#network.name) return refused(INVALID_AUTH_CAPTURE_NETWORK, payer);
    if (!isAddressEqual(requirement.asset as Address, this.#asset)) return refused('asset_mismatch', payer);
    if (requirement.extra.name !== this.#eip712.name || requirement.extra.version !== this.#eip712.version) return refused('eip712_domain_mismatch', payer);
    if (requirement.amount <= 0n || requirement.amount >= 2n ** 120n) return refused(INVALID_PAYMENT_REQUIREMENTS, payer);
    if (!isAddressEqual(a.to as Address, AUTH_CAPTURE_EIP3009_COLLECTOR)) return refused(INVALID_AUTH_CAPTURE_COLLECTOR, payer);
    // exactly the price: the whole authorization is charged
    if (BigInt(a.value) !== requirement.amount) return refused(INVALID_AUTH_CAPTURE_VALUE, payer);
    // the collector takes it with validAfter 0 and validBefore the terms' preApprovalExpiry (a uint48)
    if (BigInt(a.validAfter) !== 0n) return refused(INVALID_AUTH_CAPTURE_VALID_AFTER, payer);
    if (BigInt(a.validBefore) > BigInt(this.#terms.captureDeadline)) return refused(INVALID_AUTH_CAPTURE_VALID_BEFORE, payer);
    if (options.clock && BigInt(a.validBefore) < BigInt(this.#now()) + MIN_SECONDS_LEFT) return refused(INVALID_AUTH_CAPTURE_VALID_BEFORE, payer);
    const info = paymentInfoOf(this.#terms, requirement, parsed.data);
    if (payerAgnosticHash(this.#network.chainId, info).toLowerCase() !== a.nonce.toLowerCase()) return refused(INVALID_AUTH_CAPTURE_TERMS, payer);
    const checked: Checked = { info, id: paymentInfoHash(this.#network.chainId, info), signature: signature as Hex };
    if (options.signature && !this.#signedByPayer(a, signature as Hex)) return refused(INVALID_AUTH_CAPTURE_SIGNATURE, payer);
    return { ok: true, checked };
  }

  /** EOA signatures (65 bytes, low s), recovered against the token's domain on this chain. */
  #signedByPayer(a: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string }, signature: Hex): boolean {
    try {
      const digest = hashTypedData({
        domain: { ...this.#eip712, chainId: this.#network.chainId, verifyingContract: this.#asset },
        types: receiveWithAuthorizationTypes,
        primaryType: 'ReceiveWithAuthorization',
        message: {
          from: a.from as Address,
          to: a.to as Address,
          value: BigInt(a.value),
          validAfter: BigInt(a.validAfter),
          validBefore: BigInt(a.validBefore),
          nonce: a.nonce as Hex,
        },
      });
      return signedBy(a.from as Address, digest, signature);
    } catch {
      return false;
    }
  }
}

/** charge(paymentInfo, the whole amount, the ERC-3009 collector, the payer's signature, no fee). */
function chargeArgs({ info, signature }: Checked) {
  return [info, info.maxAmount, AUTH_CAPTURE_EIP3009_COLLECTOR, signature, 0, zeroAddress] as const;
}

/** Whether a mined transaction charged this payment: the escrow's PaymentCharged event for its id. */
function charged(receipt: TransactionReceipt, id: Hex): boolean {
  if (receipt.status !== 'success') return false;
  const escrowLogs = receipt.logs.filter((log) => isAddressEqual(log.address, AUTH_CAPTURE_ESCROW));
  return parseEventLogs({ abi: [paymentChargedEvent], logs: escrowLogs, strict: true }).some((event) => event.args.paymentInfoHash.toLowerCase() === id.toLowerCase());
}

/** The escrow's custom errors by name where they say more than the token's revert strings. */
function reasonFor(error: unknown, fallback: string): string {
  const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
  const name = reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
  if (name === 'PaymentAlreadyCollected') return 'nonce_already_used';
  if (name === 'AfterPreApprovalExpiry') return INVALID_AUTH_CAPTURE_VALID_BEFORE;
  return reasonForRevert(error, fallback);
}
