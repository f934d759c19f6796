// Verifies and settles x402 `upto` EVM payments ourselves: the payer signed a Permit2
// PermitWitnessTransferFrom for at most the quoted ceiling, with the upto proxy as spender and our
// settlement key as the witness's facilitator; we settle the actual amount (<= the ceiling) by calling the
// proxy from that key. Checks follow @x402/evm 2.27.0's upto facilitator, in the same order and with the
// same reason names; a simulated settle from our key covers what only the chain knows.
// Gas sponsoring: a payer with USDC and no native gas gives Permit2 its allowance through an EIP-2612
// permit (settleWithPermit does both in one transaction) or a signed approve we fund and broadcast.
import { evmChainClient } from './chain-client.ts';
import {
  decodeFunctionData,
  encodeFunctionData,
  isAddressEqual,
  parseAbi,
  parseSignature,
  parseTransaction,
  recoverTransactionAddress,
  hashTypedData,
  WaitForTransactionReceiptTimeoutError,
  BaseError,
  ContractFunctionRevertedError,
  type Address,
  type Chain,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionSerialized,
  type Transport,
} from 'viem';
import { signedBy } from '../../../x402/eoa-signature.ts';
import { libsecp256k1Account } from '../../../x402/libsecp256k1-account.ts';
import { uptoPermit2WitnessTypes, x402UptoPermit2ProxyABI } from '@x402/evm';
import type { EvmNetwork } from '../../../x402/networks.ts';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS, uptoPermit2PayloadSchema, type UptoPermit2Payload } from '../../../x402/upto.ts';
import { readGasSponsoring, type Eip2612PermitInfo, type Erc20ApprovalInfo, type GasSponsoring } from '../../../x402/gas-sponsoring.ts';
import { FacilitatorUnavailableError, failedSettlement, refused, type Facilitator, type Refused, type SettleOutcome, type VerifyResult } from '../../facilitator.ts';
import { isRevert, revertString, settlementUnavailable, shortMessage } from './evm-errors.ts';
import { evmSender, type TransactionSender } from './evm-sender.ts';
import { settlementFromChain } from './evm-settlement-check.ts';
import { INVALID_PERMIT2_RECIPIENT_MISMATCH, INVALID_PERMIT2_SIGNATURE, INVALID_PERMIT2_SPENDER, INVALID_UPTO_EVM_NETWORK_MISMATCH, INVALID_UPTO_EVM_PAYLOAD_SETTLEMENT_EXCEEDS_AMOUNT, INVALID_UPTO_EVM_SCHEME, INVALID_UPTO_EVM_TRANSACTION_FAILED, PERMIT2_2612_AMOUNT_MISMATCH, PERMIT2_ALLOWANCE_REQUIRED, PERMIT2_AMOUNT_MISMATCH, PERMIT2_DEADLINE_EXPIRED, PERMIT2_INSUFFICIENT_BALANCE, PERMIT2_INVALID_AMOUNT, PERMIT2_INVALID_DESTINATION, PERMIT2_INVALID_NONCE, PERMIT2_INVALID_OWNER, PERMIT2_NOT_YET_VALID, PERMIT2_PAYMENT_TOO_EARLY, PERMIT2_SIMULATION_FAILED, PERMIT2_TOKEN_MISMATCH } from './upto-reasons.ts';
import { INVALID_PAYLOAD, SETTLEMENT_RECEIPT_TIMEOUT, SETTLEMENT_RECEIPT_UNAVAILABLE, UNSUPPORTED_PAYLOAD_TYPE } from '../../reasons.ts';

/** The proxy's ABI plus the errors that bubble up from Permit2 through it, so reverts decode by name. */
const proxyAbi = [
  ...x402UptoPermit2ProxyABI,
  ...parseAbi([
    'error InvalidAmount()',
    'error InvalidNonce()',
    'error InvalidSigner()',
    'error InvalidSignature()',
    'error InvalidSignatureLength()',
    'error InvalidContractSignature()',
    'error SignatureExpired(uint256 signatureDeadline)',
  ]),
] as const;

const tokenAbi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
]);
const permit2Abi = parseAbi(['function nonceBitmap(address owner, uint256 word) view returns (uint256)']);

/** What the payment must pay: the server's own requirement, never the client's copy of it. */
export interface UptoRequirement {
  /** our network name */
  network: string;
  /** the ceiling: the quote the payer authorized */
  amount: bigint;
  payTo: string;
  asset: string;
}

export interface UptoPayment {
  /** the scheme the client said it pays with */
  scheme: string;
  network: string;
  payload: unknown;
  /** the payment's `extensions` (gas sponsoring infos) */
  extensions?: Record<string, unknown>;
}

export interface LocalEvmUptoFacilitatorOptions {
  network: EvmNetwork;
  rpcUrl: string;
  /** sends settlements and pays their gas; it is the witness's facilitator, so the proxy accepts only it */
  settlementPrivateKey: Hex;
  /** the USDC contract this facilitator accepts */
  asset: Address;
  receiptTimeoutMs: number;
  pollingIntervalMs?: number;
  /** the key's transaction sender, shared with the exact facilitator so their nonces never collide */
  sender?: TransactionSender;
  now?: () => number;
}

/** The official verify wants this much of the deadline left. */
const MIN_SECONDS_LEFT = 6n;
/** Gas we fund for a sponsored approve; the official client signs 70,000. */
const MAX_SPONSORED_APPROVE_GAS = 100_000n;

interface Checked {
  auth: UptoPermit2Payload['permit2Authorization'];
  signature: Hex;
  sponsoring: GasSponsoring;
}

type Verified = { ok: true; checked: Checked; route: 'direct' | 'eip2612' | 'erc20' } | Refused;

export class LocalEvmUptoFacilitator implements Facilitator {
  readonly #network: EvmNetwork;
  readonly #asset: Address;
  readonly #receiptTimeoutMs: number;
  readonly #pollingIntervalMs: number;
  readonly #now: () => number;
  readonly #account: PrivateKeyAccount;
  readonly #public: PublicClient<Transport, Chain>;
  readonly #sender: TransactionSender;

  constructor(options: LocalEvmUptoFacilitatorOptions) {
    this.#network = options.network;
    this.#asset = options.asset;
    this.#receiptTimeoutMs = options.receiptTimeoutMs;
    this.#pollingIntervalMs = options.pollingIntervalMs ?? 1000;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#account = libsecp256k1Account(options.settlementPrivateKey);
    this.#public = evmChainClient(options.network, options.rpcUrl, this.#pollingIntervalMs);
    // the key's one sender in this process (evmSender), so upto and exact settlements never share a nonce
    this.#sender = options.sender ?? evmSender({ client: this.#public, account: this.#account, chainId: options.network.chainId });
    if (!isAddressEqual(this.#sender.address, this.#account.address)) throw new Error('the sender must send from the settlement key');
  }

  /** What sends its transactions (the key's one sender, shared with the exact facilitator). */
  get sender(): TransactionSender {
    return this.#sender;
  }

  /** The witness's facilitator: the key that sends settlements. */
  get facilitatorAddress(): Address {
    return this.#account.address;
  }

  /** `extra` of an upto requirement: the token's EIP-712 domain comes from the exact rail's extra. */
  async requirementExtra(): Promise<Record<string, unknown>> {
    return { facilitatorAddress: this.#account.address, assetTransferMethod: 'permit2' };
  }

  /** Whether Permit2 and the upto proxy have code on this chain (upto is offered only where both do). */
  async contractsDeployed(): Promise<boolean> {
    return (await this.missingContracts()).length === 0;
  }

  /** Which of Permit2 and the upto proxy have no code on this chain, named with their addresses. */
  async missingContracts(): Promise<string[]> {
    const contracts = [
      ['Permit2', PERMIT2_ADDRESS],
      ['the upto proxy', UPTO_PROXY_ADDRESS],
    ] as const;
    const codes = await Promise.all(contracts.map(([, address]) => this.#public.getCode({ address })));
    return contracts.filter((_, i) => !codes[i] || codes[i] === '0x').map(([name, address]) => `${name} (${address})`);
  }

  async verify(payment: UptoPayment, requirement: UptoRequirement): Promise<VerifyResult> {
    const verified = await this.#verify(payment, requirement);
    return verified.ok ? { isValid: true, payer: verified.checked.auth.from } : verified.result;
  }

  /**
   * Settles `amount` (the actual cost, at most the ceiling). Zero moves nothing and sends nothing
   * (transaction ""), after the same verification.
   */
  async settle(payment: UptoPayment, requirement: UptoRequirement, amount: bigint = requirement.amount): Promise<SettleOutcome> {
    // Re-verified here against the ceiling: settle never trusts that verify ran, and the simulation turns a
    // doomed transaction (spent nonce, expired) into a failure that costs no gas.
    let verified: Verified;
    try {
      verified = await this.#verify(payment, requirement);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return { status: 'unavailable', reason: settlementUnavailable(error) };
      throw error;
    }
    if (!verified.ok) return failedSettlement(verified.result);
    const { checked, route } = verified;
    const payer = checked.auth.from;
    if (amount < 0n || amount > BigInt(checked.auth.permitted.amount)) {
      return { status: 'failed', reason: INVALID_UPTO_EVM_PAYLOAD_SETTLEMENT_EXCEEDS_AMOUNT, payer };
    }
    if (amount === 0n) return { status: 'settled', transaction: '', payer };

    if (route === 'erc20' && checked.sponsoring.erc20Approval) {
      const approved = await this.#broadcastSponsoredApproval(checked.sponsoring.erc20Approval, payer);
      if (approved) return approved;
    }
    const data =
      route === 'eip2612' && checked.sponsoring.eip2612
        ? encodeFunctionData({ abi: proxyAbi, functionName: 'settleWithPermit', args: [permitArgs(checked.sponsoring.eip2612), ...settleArgs(checked, amount)] })
        : encodeFunctionData({ abi: proxyAbi, functionName: 'settle', args: settleArgs(checked, amount) });
    const sent = await this.#sender.send({ to: UPTO_PROXY_ADDRESS, data });
    if (sent.status === 'rejected') {
      // only a revert is the payment's fault: anything else left its authorization unused and good
      if (isRevert(sent.error)) return { status: 'failed', reason: reasonFor(sent.error, INVALID_UPTO_EVM_TRANSACTION_FAILED), payer };
      return { status: 'unavailable', reason: settlementUnavailable(sent.error), payer };
    }
    if (sent.status === 'uncertain') {
      return { status: 'unknown', reason: `broadcast_uncertain: ${shortMessage(sent.error)}`, payer, transaction: sent.transaction };
    }
    return this.#awaitReceipt(sent.transaction, payer);
  }

  /** For reconciliation: what became of a settlement whose outcome was unknown. */
  async checkSettlement(payment: UptoPayment, _requirement: UptoRequirement, transaction: string): Promise<SettleOutcome> {
    const parsed = uptoPermit2PayloadSchema.safeParse(payment.payload);
    if (!parsed.success) return { status: 'failed', reason: INVALID_PAYLOAD };
    const { from: payer, nonce, deadline } = parsed.data.permit2Authorization;
    return settlementFromChain({
      client: this.#public,
      payer,
      transaction,
      nonceUsed: (blockNumber) => this.#nonceUsed(payer as Address, BigInt(nonce), blockNumber),
      expired: (timestamp) => timestamp > BigInt(deadline),
      revertedReason: INVALID_UPTO_EVM_TRANSACTION_FAILED,
      expiredReason: PERMIT2_DEADLINE_EXPIRED,
      rebroadcast: async () => this.#sender.rebroadcast?.(),
    });
  }

  async #nonceUsed(owner: Address, nonce: bigint, blockNumber?: bigint): Promise<boolean> {
    const bitmap = await this.#public.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: 'nonceBitmap',
      args: [owner, nonce >> 8n],
      blockNumber,
    });
    return ((bitmap >> (nonce & 0xffn)) & 1n) === 1n;
  }

  async #verify(payment: UptoPayment, requirement: UptoRequirement): Promise<Verified> {
    try {
      // the off-chain checks read the chain too (a sponsored approval's fees and nonce)
      const offChain = await this.#checkOffChain(payment, requirement);
      if (!offChain.ok) return offChain;
      return await this.#checkOnChain(offChain.checked, requirement);
    } catch (error) {
      // the RPC failed us: no verdict on the payment, which may well be fine
      throw new FacilitatorUnavailableError(`${this.#network.name} upto verification`, error);
    }
  }

  async #checkOffChain(payment: UptoPayment, requirement: UptoRequirement): Promise<Verified> {
    const parsed = uptoPermit2PayloadSchema.safeParse(payment.payload);
    if (!parsed.success) return refused(UNSUPPORTED_PAYLOAD_TYPE);
    const { signature, permit2Authorization: auth } = parsed.data;
    const payer = auth.from;
    if (payment.scheme !== 'upto') return refused(INVALID_UPTO_EVM_SCHEME, payer);
    if (payment.network !== requirement.network || requirement.network !== this.#network.name) {
      return refused(INVALID_UPTO_EVM_NETWORK_MISMATCH, payer);
    }
    if (!isAddressEqual(requirement.asset as Address, this.#asset)) return refused(PERMIT2_TOKEN_MISMATCH, payer);
    if (!isAddressEqual(auth.spender as Address, UPTO_PROXY_ADDRESS)) return refused(INVALID_PERMIT2_SPENDER, payer);
    if (!isAddressEqual(auth.witness.to as Address, requirement.payTo as Address)) return refused(INVALID_PERMIT2_RECIPIENT_MISMATCH, payer);
    if (!isAddressEqual(auth.witness.facilitator as Address, this.#account.address)) return refused('upto_facilitator_mismatch', payer);
    const now = BigInt(this.#now());
    if (BigInt(auth.deadline) < now + MIN_SECONDS_LEFT) return refused(PERMIT2_DEADLINE_EXPIRED, payer);
    if (BigInt(auth.witness.validAfter) > now) return refused(PERMIT2_NOT_YET_VALID, payer);
    if (BigInt(auth.permitted.amount) !== requirement.amount) return refused(PERMIT2_AMOUNT_MISMATCH, payer);
    if (!isAddressEqual(auth.permitted.token as Address, this.#asset)) return refused(PERMIT2_TOKEN_MISMATCH, payer);
    if (!this.#signedByPayer(auth, signature as Hex)) return refused(INVALID_PERMIT2_SIGNATURE, payer);

    const sponsoring = readGasSponsoring(payment.extensions);
    if (typeof sponsoring === 'string') return refused(sponsoring, payer);
    if (sponsoring.eip2612) {
      const reason = this.#checkEip2612(sponsoring.eip2612, auth);
      if (reason) return refused(reason, payer);
    }
    return { ok: true, checked: { auth, signature: signature as Hex, sponsoring }, route: 'direct' };
  }

  /** EOA signatures (65 bytes, low s: what every signer produces), recovered against Permit2's domain on this chain. */
  #signedByPayer(auth: Checked['auth'], signature: Hex): boolean {
    try {
      const digest = hashTypedData({
        domain: { name: 'Permit2', chainId: this.#network.chainId, verifyingContract: PERMIT2_ADDRESS },
        types: uptoPermit2WitnessTypes,
        primaryType: 'PermitWitnessTransferFrom',
        message: {
          permitted: { token: auth.permitted.token as Address, amount: BigInt(auth.permitted.amount) },
          spender: auth.spender as Address,
          nonce: BigInt(auth.nonce),
          deadline: BigInt(auth.deadline),
          witness: {
            to: auth.witness.to as Address,
            facilitator: auth.witness.facilitator as Address,
            validAfter: BigInt(auth.witness.validAfter),
          },
        },
      });
      return signedBy(auth.from as Address, digest, signature);
    } catch {
      return false;
    }
  }

  #checkEip2612(info: Eip2612PermitInfo, auth: Checked['auth']): string | undefined {
    if (!isAddressEqual(info.from as Address, auth.from as Address)) return 'eip2612_from_mismatch';
    if (!isAddressEqual(info.asset as Address, this.#asset)) return 'eip2612_asset_mismatch';
    if (!isAddressEqual(info.spender as Address, PERMIT2_ADDRESS)) return 'eip2612_spender_not_permit2';
    if (BigInt(info.deadline) < BigInt(this.#now()) + MIN_SECONDS_LEFT) return 'eip2612_deadline_expired';
    // the proxy requires the permit to approve exactly the permitted amount
    if (BigInt(info.amount) !== BigInt(auth.permitted.amount)) return PERMIT2_2612_AMOUNT_MISMATCH;
    return undefined;
  }

  async #checkOnChain(checked: Checked, requirement: UptoRequirement): Promise<Verified> {
    const payer = checked.auth.from as Address;
    const [balance, allowance] = await Promise.all([
      this.#public.readContract({ address: this.#asset, abi: tokenAbi, functionName: 'balanceOf', args: [payer] }),
      this.#public.readContract({ address: this.#asset, abi: tokenAbi, functionName: 'allowance', args: [payer, PERMIT2_ADDRESS] }),
    ]);
    if (balance < requirement.amount) return refused(PERMIT2_INSUFFICIENT_BALANCE, payer);
    const { eip2612, erc20Approval } = checked.sponsoring;
    // An allowance already in place needs no sponsoring (a replay whose approval landed goes this way too).
    if (allowance >= requirement.amount || (!eip2612 && !erc20Approval)) {
      if (allowance < requirement.amount) return refused(PERMIT2_ALLOWANCE_REQUIRED, payer);
      return this.#simulate(checked, requirement, 'direct');
    }
    if (eip2612) return this.#simulate(checked, requirement, 'eip2612');
    const reason = await this.#checkErc20Approval(erc20Approval as Erc20ApprovalInfo, checked, requirement);
    if (reason) return refused(reason, payer);
    // The settle cannot be simulated before the approval lands; the approval itself was checked above.
    return { ok: true, checked, route: 'erc20' };
  }

  async #simulate(checked: Checked, requirement: UptoRequirement, route: 'direct' | 'eip2612'): Promise<Verified> {
    const payer = checked.auth.from;
    try {
      if (route === 'eip2612' && checked.sponsoring.eip2612) {
        await this.#public.simulateContract({
          account: this.#account,
          address: UPTO_PROXY_ADDRESS,
          abi: proxyAbi,
          functionName: 'settleWithPermit',
          args: [permitArgs(checked.sponsoring.eip2612), ...settleArgs(checked, requirement.amount)],
        });
      } else {
        await this.#public.simulateContract({
          account: this.#account,
          address: UPTO_PROXY_ADDRESS,
          abi: proxyAbi,
          functionName: 'settle',
          args: settleArgs(checked, requirement.amount),
        });
      }
    } catch (error) {
      if (!isRevert(error)) throw error;
      return refused(reasonFor(error, PERMIT2_SIMULATION_FAILED), payer);
    }
    return { ok: true, checked, route };
  }

  /** The signed approve must be the payer's approve(Permit2, >= ceiling) on our token and chain, sendable now. */
  async #checkErc20Approval(info: Erc20ApprovalInfo, checked: Checked, requirement: UptoRequirement): Promise<string | undefined> {
    const payer = checked.auth.from as Address;
    if (!isAddressEqual(info.from as Address, payer)) return 'erc20_approval_from_mismatch';
    if (!isAddressEqual(info.asset as Address, this.#asset)) return 'erc20_approval_asset_mismatch';
    if (!isAddressEqual(info.spender as Address, PERMIT2_ADDRESS)) return 'erc20_approval_spender_not_permit2';
    let tx: ReturnType<typeof parseTransaction>;
    try {
      tx = parseTransaction(info.signedTransaction as Hex);
    } catch {
      return 'erc20_approval_tx_parse_failed';
    }
    if (!tx.to || !isAddressEqual(tx.to, this.#asset)) return 'erc20_approval_tx_wrong_target';
    if (tx.chainId !== this.#network.chainId) return 'erc20_approval_tx_wrong_chain';
    if (tx.value && tx.value > 0n) return 'erc20_approval_tx_invalid_calldata';
    try {
      const call = decodeFunctionData({ abi: tokenAbi, data: tx.data ?? '0x' });
      if (call.functionName !== 'approve') return 'erc20_approval_tx_wrong_selector';
      if (!isAddressEqual(call.args[0], PERMIT2_ADDRESS)) return 'erc20_approval_tx_wrong_spender';
      if (call.args[1] < requirement.amount) return PERMIT2_ALLOWANCE_REQUIRED;
    } catch {
      return 'erc20_approval_tx_wrong_selector';
    }
    try {
      const signer = await recoverTransactionAddress({ serializedTransaction: info.signedTransaction as TransactionSerialized });
      if (!isAddressEqual(signer, payer)) return 'erc20_approval_tx_signer_mismatch';
    } catch {
      return 'erc20_approval_tx_invalid_signature';
    }
    // We pay for its gas, so it must be a reasonable transaction, and one the chain will still take.
    const gas = tx.gas ?? 0n;
    const maxFee = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
    if (gas === 0n || gas > MAX_SPONSORED_APPROVE_GAS) return 'erc20_approval_tx_gas_out_of_range';
    const fees = await this.#public.estimateFeesPerGas();
    // the official client signs with the node's estimate, or 1 gwei when it has none
    const ceiling = fees.maxFeePerGas * 2n > 1_100_000_000n ? fees.maxFeePerGas * 2n : 1_100_000_000n;
    if (maxFee > ceiling) return 'erc20_approval_tx_fee_too_high';
    const nonce = await this.#public.getTransactionCount({ address: payer, blockTag: 'pending' });
    if (tx.nonce !== nonce) return 'erc20_approval_tx_nonce_mismatch';
    return undefined;
  }

  /**
   * Funds the payer's approve gas, broadcasts its signed approve and waits for it. Returns an outcome only
   * when settlement cannot go on; every failure here is a certain 'failed' (no transfer was sent).
   */
  async #broadcastSponsoredApproval(info: Erc20ApprovalInfo, payer: string): Promise<SettleOutcome | undefined> {
    const failed = (reason: string): SettleOutcome => ({ status: 'failed', reason, payer });
    const tx = parseTransaction(info.signedTransaction as Hex);
    const need = (tx.gas ?? 0n) * (tx.maxFeePerGas ?? tx.gasPrice ?? 0n);
    const has = await this.#public.getBalance({ address: payer as Address });
    if (has < need) {
      const funded = await this.#sender.send({ to: payer as Address, value: need - has });
      if (funded.status !== 'broadcast') return failed('erc20_approval_gas_funding_failed');
      const receipt = await this.#public
        .waitForTransactionReceipt({ hash: funded.transaction, timeout: this.#receiptTimeoutMs, pollingInterval: this.#pollingIntervalMs })
        .catch(() => undefined);
      if (receipt?.status !== 'success') return failed('erc20_approval_gas_funding_failed');
    }
    let hash: Hex;
    try {
      hash = await this.#public.sendRawTransaction({ serializedTransaction: info.signedTransaction as Hex });
    } catch {
      // e.g. a replayed approve whose nonce is spent: the payment fails, the gateway stays up
      return failed('erc20_approval_tx_failed');
    }
    const receipt = await this.#public
      .waitForTransactionReceipt({ hash, timeout: this.#receiptTimeoutMs, pollingInterval: this.#pollingIntervalMs })
      .catch(() => undefined);
    if (receipt?.status !== 'success') return failed('erc20_approval_tx_failed');
    return undefined;
  }

  async #awaitReceipt(transaction: Hex, payer: string): Promise<SettleOutcome> {
    try {
      const receipt = await this.#public.waitForTransactionReceipt({
        hash: transaction,
        timeout: this.#receiptTimeoutMs,
        pollingInterval: this.#pollingIntervalMs,
      });
      return receipt.status === 'success'
        ? { status: 'settled', transaction, payer }
        : { status: 'failed', reason: INVALID_UPTO_EVM_TRANSACTION_FAILED, payer, transaction };
    } catch (error) {
      // Broadcast but unconfirmed: it may still land, so this is never reported as a failure.
      const reason = error instanceof WaitForTransactionReceiptTimeoutError ? SETTLEMENT_RECEIPT_TIMEOUT : SETTLEMENT_RECEIPT_UNAVAILABLE;
      return { status: 'unknown', reason, payer, transaction };
    }
  }
}

function settleArgs(checked: Checked, amount: bigint) {
  const { auth, signature } = checked;
  return [
    {
      permitted: { token: auth.permitted.token as Address, amount: BigInt(auth.permitted.amount) },
      nonce: BigInt(auth.nonce),
      deadline: BigInt(auth.deadline),
    },
    amount,
    auth.from as Address,
    { to: auth.witness.to as Address, facilitator: auth.witness.facilitator as Address, validAfter: BigInt(auth.witness.validAfter) },
    signature,
  ] as const;
}

function permitArgs(info: Eip2612PermitInfo) {
  const { r, s, v, yParity } = parseSignature(info.signature as Hex);
  return { value: BigInt(info.amount), deadline: BigInt(info.deadline), r, s, v: v !== undefined ? Number(v) : 27 + yParity };
}

// Reverts of the proxy and of Permit2 through it -> the official facilitator's reason names.
const REVERTS: Record<string, string> = {
  AmountExceedsPermitted: 'upto_amount_exceeds_permitted',
  UnauthorizedFacilitator: 'upto_unauthorized_facilitator',
  Permit2612AmountMismatch: PERMIT2_2612_AMOUNT_MISMATCH,
  InvalidAmount: PERMIT2_INVALID_AMOUNT,
  InvalidDestination: PERMIT2_INVALID_DESTINATION,
  InvalidOwner: PERMIT2_INVALID_OWNER,
  PaymentTooEarly: PERMIT2_PAYMENT_TOO_EARLY,
  InvalidNonce: PERMIT2_INVALID_NONCE,
  InvalidSigner: INVALID_PERMIT2_SIGNATURE,
  InvalidSignature: INVALID_PERMIT2_SIGNATURE,
  InvalidSignatureLength: INVALID_PERMIT2_SIGNATURE,
  InvalidContractSignature: INVALID_PERMIT2_SIGNATURE,
  SignatureExpired: PERMIT2_DEADLINE_EXPIRED,
};

function reasonFor(error: unknown, fallback: string): string {
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    const name = reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
    if (name && REVERTS[name]) return REVERTS[name];
  }
  const text = revertString(error);
  if (text && /TRANSFER_FROM_FAILED/.test(text)) return PERMIT2_ALLOWANCE_REQUIRED;
  return fallback;
}
