// Verifies and settles x402 "exact" EVM payments ourselves: our RPC, our settlement key, one network.
// Every requirement is compared exactly (recipient, amount, asset, network, time window), the
// signature is recovered locally, and a simulated transferWithAuthorization covers the rest.
import { evmChainClient } from './chain-client.ts';
import {
  encodeFunctionData,
  isAddress,
  isAddressEqual,
  parseSignature,
  hashTypedData,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type Chain,
  type Transport,
} from 'viem';
import { signedBy } from '../../../x402/eoa-signature.ts';
import { libsecp256k1Account } from '../../../x402/libsecp256k1-account.ts';
import type { EvmNetwork } from '../../../x402/networks.ts';
import { evmExactPayloadSchema } from '../../../x402/types.ts';
import type { PaymentProof, PaymentRequirement } from '../../../x402/model.ts';
import { FacilitatorUnavailableError, failedSettlement, refused, type Facilitator, type Refused, type SettleOutcome, type VerifyResult } from '../../facilitator.ts';
import { eip3009Abi, transferWithAuthorizationTypes } from './eip3009-abi.ts';

import { isRevert, reasonForRevert, settlementUnavailable, shortMessage } from './evm-errors.ts';
import { evmSender, type EvmSender } from './evm-sender.ts';
import {
  authorizationUsedEvent,
  receiptUsesAuthorization,
  sendAndWatch,
  SettlementBatcher,
  type SettlementCall,
  type SubmitResult,
} from './evm-settlement-batcher.ts';
import { MULTICALL3_ADDRESS } from './multicall3-abi.ts';
import { settlementFromChain } from './evm-settlement-check.ts';
import type { NonceAllocator, PendingCount } from '../../../store/nonce-allocator.ts';
import { INVALID_NETWORK, INVALID_PAYLOAD, INVALID_PAYMENT_REQUIREMENTS, INVALID_SCHEME, INVALID_TRANSACTION_STATE, SETTLEMENT_RECEIPT_TIMEOUT, SETTLEMENT_REJECTED, SETTLEMENT_REPLACED, TRANSACTION_SIMULATION_FAILED } from '../../reasons.ts';
import { INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_AFTER, INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_BEFORE, INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALUE, INVALID_EXACT_EVM_PAYLOAD_RECIPIENT_MISMATCH, INVALID_EXACT_EVM_PAYLOAD_SIGNATURE } from './exact-reasons.ts';

export interface LocalEvmFacilitatorOptions {
  network: EvmNetwork;
  rpcUrl: string;
  /** pays gas for settlements; never leaves this process */
  settlementPrivateKey: Hex;
  /** the USDC contract this facilitator accepts (the registry's, or the sandbox's TestUSDC) */
  asset: Address;
  /** the asset's EIP-712 domain name and version */
  eip712: { name: string; version: string };
  /** how long settle() waits for a receipt before answering 'unknown' */
  receiptTimeoutMs: number;
  /** receipt polling period; default 1000 ms (a local anvil wants ~50) */
  pollingIntervalMs?: number;
  /** unix time in seconds; injectable for tests */
  now?: () => number;
  /** the settlement key's nonces when other instances send with it too (the shared ledger's) */
  nonces?: (pendingCount: PendingCount) => NonceAllocator | undefined;
  /**
   * settlements that queue up while the key is sending go out together in one Multicall3 transaction
   * (evm-settlement-batcher.ts); needs Multicall3 at its canonical address. Default off: see docs/performance.md, "Settlement batching".
   */
  batchSettlements?: boolean;
}

/** settle() trusts a verify() of the same payload object by this process this recently (see settle()). */
const VERIFIED_REUSE_MS = 60_000;
/** Gas limit = the simulation's estimate plus a quarter: storage the transfer touches may be colder by then. */
const GAS_MARGIN_PERCENT = 125n;
/** A replaced settlement (its nonce went to another transaction) is sent again at most this many times. */
const MAX_REPLACED_RETRIES = 2;

/** x402 clients sign validBefore = now + maxTimeoutSeconds; we need this much of it left to settle. */
const MIN_SECONDS_LEFT = 6n;

interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

type Checked = { ok: true; auth: Authorization; gas: bigint } | Refused;
type CheckedOffChain = { ok: true; auth: Authorization } | Refused;

export class LocalEvmFacilitator implements Facilitator {
  readonly #network: EvmNetwork;
  readonly #asset: Address;
  readonly #eip712: { name: string; version: string };
  readonly #receiptTimeoutMs: number;
  readonly #pollingIntervalMs: number;
  readonly #now: () => number;
  readonly #account: PrivateKeyAccount;
  readonly #public: PublicClient<Transport, Chain>;
  readonly #sender: EvmSender;
  readonly #batcher: SettlementBatcher | undefined;
  /** gas estimates of payloads this process verified, and when (settle() skips a fresh re-verification) */
  readonly #verified = new WeakMap<PaymentProof, { gas: bigint; at: number }>();

  constructor(options: LocalEvmFacilitatorOptions) {
    if (!isAddress(options.asset, { strict: false })) throw new Error(`invalid asset address ${options.asset}`);
    this.#network = options.network;
    this.#asset = options.asset;
    this.#eip712 = { name: options.eip712.name, version: options.eip712.version };
    this.#receiptTimeoutMs = options.receiptTimeoutMs;
    this.#pollingIntervalMs = options.pollingIntervalMs ?? 1000;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#account = libsecp256k1Account(options.settlementPrivateKey);
    this.#public = evmChainClient(options.network, options.rpcUrl, this.#pollingIntervalMs);
    this.#sender = evmSender({ client: this.#public, account: this.#account, chainId: options.network.chainId, nonces: options.nonces });
    this.#batcher = options.batchSettlements ? new SettlementBatcher(this.#sender, { pollingIntervalMs: this.#pollingIntervalMs }) : undefined;
  }

  /** Settlements waiting to share the next batch transaction (0 without batching). */
  get settlementsWaiting(): number {
    return this.#batcher?.waiting ?? 0;
  }

  /** The settlement key's one sender in this process: a facilitator of another scheme sending from the same key uses it. */
  get sender(): EvmSender {
    return this.#sender;
  }

  /** The address that sends settlements and pays their gas. */
  get settlementAddress(): Address {
    return this.#account.address;
  }

  async requirementExtra(): Promise<Record<string, unknown>> {
    return { name: this.#eip712.name, version: this.#eip712.version };
  }

  async readinessProblems(): Promise<string[]> {
    const network = this.#network.name;
    const problems: string[] = [];
    if (!(await this.#public.getCode({ address: this.#asset }))) problems.push(`${network}: no contract at asset ${this.#asset}`);
    if ((await this.#public.getBalance({ address: this.#account.address })) === 0n) {
      problems.push(`${network}: settlement account ${this.#account.address} has no native gas to send settlements`);
    }
    if (this.#batcher && !(await this.#public.getCode({ address: MULTICALL3_ADDRESS }))) {
      problems.push(`${network}: settlement batching is on but there is no Multicall3 at ${MULTICALL3_ADDRESS}`);
    }
    return problems;
  }

  async verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<VerifyResult> {
    const checked = await this.#verify(proof, requirement);
    if (!checked.ok) return checked.result;
    this.#verified.set(proof, { gas: checked.gas, at: Date.now() });
    return { isValid: true, payer: checked.auth.from };
  }

  async settle(proof: PaymentProof, requirement: PaymentRequirement): Promise<SettleOutcome> {
    // settle() never trusts that verify() ran: a proof this process did not verify in the last
    // VERIFIED_REUSE_MS (the reconciler's, another caller's) is verified in full, simulation included, so a
    // doomed transaction costs no gas. One it did verify keeps that verification: the off-chain checks run
    // again (cheap, and the clock has moved), the signature recovery and the simulation do not. What can
    // change in between (the payer spends the balance or uses the authorization elsewhere) makes the
    // transaction revert: a 'failed' settlement, nothing served, some gas spent; never a false 'settled'.
    const recent = this.#verified.get(proof);
    let checked: Checked;
    try {
      checked =
        recent && Date.now() - recent.at <= VERIFIED_REUSE_MS
          ? await this.#checkOffChain(proof, requirement, { signature: false }).then((c) => (c.ok ? { ...c, gas: recent.gas } : c))
          : await this.#verify(proof, requirement);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return { status: 'unavailable', reason: settlementUnavailable(error) };
      throw error;
    }
    if (!checked.ok) return failedSettlement(checked.result);
    return this.#settleAuthorization(checked.auth, checked.gas);
  }

  /** Sends the transfer and waits for its receipt; a replaced transaction is sent again while the authorization is unused. */
  async #settleAuthorization(auth: Authorization, gas: bigint): Promise<SettleOutcome> {
    const payer = auth.from;
    const deadline = Date.now() + this.#receiptTimeoutMs;
    const call: SettlementCall = {
      to: this.#asset,
      data: encodeFunctionData({ abi: eip3009Abi, functionName: 'transferWithAuthorization', args: transferArgs(auth) }),
      gas: (gas * GAS_MARGIN_PERCENT) / 100n,
    };
    for (let attempt = 0; ; attempt++) {
      const timeoutMs = Math.max(0, deadline - Date.now());
      const sent: SubmitResult = this.#batcher
        ? await this.#batcher.submit(call, timeoutMs)
        : await sendAndWatch(this.#sender, call, timeoutMs, this.#pollingIntervalMs);
      if (sent.status === 'rejected') {
        // Nothing left this process, or the node refused it. Only a revert is the payment's fault; anything else
        // (no fees or nonce could be read, the node refused our transaction) leaves the authorization unused and good.
        if (isRevert(sent.error)) return { status: 'failed', reason: reasonForRevert(sent.error, SETTLEMENT_REJECTED), payer };
        return { status: 'unavailable', reason: settlementUnavailable(sent.error), payer };
      }
      if (sent.status === 'uncertain') {
        return { status: 'unknown', reason: `broadcast_uncertain: ${shortMessage(sent.error)}`, payer, transaction: sent.transaction };
      }
      const { watched } = sent;
      if (watched.status === 'mined') {
        // A batch transaction succeeds even when our call in it failed: only our AuthorizationUsed event says it moved.
        return receiptUsesAuthorization(watched.receipt, this.#asset, auth.from, auth.nonce)
          ? { status: 'settled', transaction: sent.transaction, payer }
          : { status: 'failed', reason: INVALID_TRANSACTION_STATE, payer, transaction: sent.transaction };
      }
      // Broadcast but unconfirmed: it may still land, so this is never reported as a failure.
      if (watched.status === 'timeout') return { status: 'unknown', reason: SETTLEMENT_RECEIPT_TIMEOUT, payer, transaction: sent.transaction };
      // Replaced: ours can never be mined. If the authorization was used anyway (by another transaction),
      // it is settled; if not, it is sent again with a new nonce (the token lets it through once at most).
      const used = await this.#authorizationUsed(auth).catch(() => undefined);
      if (used === true) return { status: 'settled', transaction: await this.#settlingTransaction(auth.from, auth.nonce), payer };
      if (used === undefined || attempt >= MAX_REPLACED_RETRIES || Date.now() >= deadline) {
        return { status: 'unknown', reason: SETTLEMENT_REPLACED, payer, transaction: sent.transaction };
      }
    }
  }

  #authorizationUsed(auth: Authorization): Promise<boolean> {
    return this.#public.readContract({ address: this.#asset, abi: eip3009Abi, functionName: 'authorizationState', args: [auth.from, auth.nonce] });
  }

  /** The transaction that consumed an authorization, from the token's AuthorizationUsed event. */
  async #settlingTransaction(authorizer: Address, nonce: Hex): Promise<string> {
    // Public RPCs may refuse a log query over the whole chain; the settlement stands without its hash.
    const logs = await this.#public
      .getLogs({ address: this.#asset, event: authorizationUsedEvent, args: { authorizer, nonce }, fromBlock: 'earliest' })
      .catch(() => []);
    return logs.at(-1)?.transactionHash ?? '';
  }

  async checkSettlement(
    proof: PaymentProof,
    requirement: PaymentRequirement,
    transaction: string,
  ): Promise<SettleOutcome> {
    const parsed = evmExactPayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return { status: 'failed', reason: INVALID_PAYLOAD };
    const { from, nonce, validBefore } = parsed.data.authorization;
    const authorizationKey = `${from.toLowerCase()}:${nonce.toLowerCase()}`;
    return settlementFromChain({
      client: this.#public,
      payer: from,
      transaction,
      nonceUsed: (blockNumber) =>
        this.#public.readContract({
          address: this.#asset,
          abi: eip3009Abi,
          functionName: 'authorizationState',
          args: [from as Address, nonce as Hex],
          blockNumber,
        }),
      // past validBefore no block can include it any more
      expired: (timestamp) => timestamp >= BigInt(validBefore),
      revertedReason: INVALID_TRANSACTION_STATE,
      expiredReason: INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_BEFORE,
      findTransaction: () => this.#settlingTransaction(from as Address, nonce as Hex),
      carried: (receipt) => receiptUsesAuthorization(receipt, this.#asset, from as Address, nonce as Hex),
      rebroadcast: () => this.#sender.rebroadcast(),
      // one new settlement per authorization at a time: a check made while it waits for its receipt says pending
      resettle: () => {
        if (this.#settlingAnew.has(authorizationKey)) return Promise.resolve<SettleOutcome>({ status: 'unknown', reason: 'settlement_pending', payer: from, transaction });
        const anew = this.settle(proof, requirement).finally(() => this.#settlingAnew.delete(authorizationKey));
        this.#settlingAnew.add(authorizationKey);
        return anew;
      },
    });
  }

  /** authorizations (payer:nonce) being settled anew by a reconciliation check (see checkSettlement) */
  readonly #settlingAnew = new Set<string>();

  /** All checks of verify(); returns the typed authorization when every one passes. */
  async #verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<Checked> {
    const offChain = await this.#checkOffChain(proof, requirement);
    if (!offChain.ok) return offChain;
    try {
      return await this.#checkOnChain(offChain.auth);
    } catch (error) {
      // the RPC failed us: no verdict on the payment, which may well be fine
      throw new FacilitatorUnavailableError(`${this.#network.name} verification`, error);
    }
  }

  async #checkOffChain(proof: PaymentProof, requirement: PaymentRequirement, options = { signature: true }): Promise<CheckedOffChain> {
    if (proof.scheme !== 'exact' || requirement.scheme !== 'exact') return refused(INVALID_SCHEME);
    if (proof.network !== requirement.network || requirement.network !== this.#network.name) {
      return refused(INVALID_NETWORK);
    }
    const parsed = evmExactPayloadSchema.safeParse(proof.payload);
    if (!parsed.success) return refused(INVALID_PAYLOAD);
    const { signature, authorization: a } = parsed.data;
    const payer = a.from;

    if (requirement.amount < 0n || !isAddress(requirement.payTo, { strict: false })) {
      return refused(INVALID_PAYMENT_REQUIREMENTS, payer);
    }
    if (!isAddress(requirement.asset, { strict: false }) || !isAddressEqual(requirement.asset, this.#asset)) {
      return refused('asset_mismatch', payer);
    }
    // Clients sign with extra.name/version; a domain other than the token's can never settle.
    if (requirement.extra.name !== this.#eip712.name || requirement.extra.version !== this.#eip712.version) {
      return refused('eip712_domain_mismatch', payer);
    }
    if (!isAddressEqual(a.to as Address, requirement.payTo as Address)) {
      return refused(INVALID_EXACT_EVM_PAYLOAD_RECIPIENT_MISMATCH, payer);
    }
    // Exactly the price: less is underpayment, more is a client bug we will not profit from.
    if (BigInt(a.value) !== requirement.amount) {
      return refused(INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALUE, payer);
    }
    const now = BigInt(this.#now());
    if (BigInt(a.validAfter) > now) return refused(INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_AFTER, payer);
    if (BigInt(a.validBefore) < now + MIN_SECONDS_LEFT) {
      return refused(INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_BEFORE, payer);
    }

    const auth: Authorization = {
      from: a.from as Address,
      to: a.to as Address,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce as Hex,
      signature: signature as Hex,
    };
    if (options.signature && !this.#signedByPayer(auth)) return refused(INVALID_EXACT_EVM_PAYLOAD_SIGNATURE, payer);
    return { ok: true, auth };
  }

  /** EOA signatures only (65 bytes, low s), recovered against the token's domain on this chain. */
  #signedByPayer(auth: Authorization): boolean {
    try {
      const digest = hashTypedData({
        domain: { ...this.#eip712, chainId: this.#network.chainId, verifyingContract: this.#asset },
        types: transferWithAuthorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: auth,
      });
      return signedBy(auth.from, digest, auth.signature);
    } catch {
      return false;
    }
  }

  /**
   * One chain call: eth_estimateGas of the very transfer settle() sends, from our settlement account. It
   * simulates the transfer (a revert's string names the reason: a used authorization, too little balance,
   * a bad signature, an expired window, a blacklisted or paused token), and its gas is the settlement's
   * limit. No separate authorizationState or balanceOf reads: the revert strings tell the same.
   */
  async #checkOnChain(auth: Authorization): Promise<Checked> {
    try {
      const gas = await this.#public.estimateContractGas({
        account: this.#account,
        address: this.#asset,
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: transferArgs(auth),
      });
      return { ok: true, auth, gas };
    } catch (error) {
      if (!isRevert(error)) throw error;
      return refused(reasonForRevert(error, TRANSACTION_SIMULATION_FAILED), auth.from);
    }
  }
}

/** Arguments of the (v, r, s) transferWithAuthorization, which every USDC version has. */
function transferArgs(auth: Authorization) {
  const { r, s, v, yParity } = parseSignature(auth.signature);
  const vByte = v !== undefined ? Number(v) : 27 + yParity;
  return [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, vByte, r, s] as const;
}
