// The local facilitator for x402 `batch-settlement` on one EVM network: the official @x402/evm 2.27 facilitator
// scheme (its deposit checks and simulations, claim and refund signing, settle), given a signer whose
// transactions go out through the settlement key's one sender (shared with exact and upto, so no two of them
// ever take the same nonce). The settlement key is also the receiverAuthorizer: it signs claims and refunds.
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import { toFacilitatorEvmSigner, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@x402/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { encodeFunctionData, parseAbi, type Abi, type Address, type Hex, type PublicClient, type Transport, type Chain } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { EvmNetwork } from '../../../x402/networks.ts';
import type { PaymentRequirement } from '../../../x402/model.ts';
import { v2PaymentPayload, v2Requirements } from '../../../x402/v2/codec.ts';
import { BATCH_SETTLEMENT_CONTRACT, channelStateFromWire, type ChannelSubmission } from '../../../x402/batch-settlement.ts';
import { libsecp256k1Account } from '../../../x402/libsecp256k1-account.ts';
import { evmChainClient } from './chain-client.ts';
import { evmSender, type TransactionSender } from './evm-sender.ts';
import type { ChannelFacilitator, ChannelProof, ChannelSettleResult, ChannelVerifyResult, OnChainChannel } from '../../channels/channel-facilitator.ts';

export interface LocalEvmChannelFacilitatorOptions {
  network: EvmNetwork;
  rpcUrl: string;
  /** sends deposits, claims, settlements and refunds, and signs claims and refunds as receiverAuthorizer */
  settlementPrivateKey: Hex;
  receiptTimeoutMs: number;
  /** the key's transaction sender, shared with the exact facilitator */
  sender?: TransactionSender;
  /** how often a receipt is polled for (default 250 ms) */
  pollingIntervalMs?: number;
}

const escrowAbi = parseAbi([
  'function channels(bytes32) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32) view returns (uint128 amount, uint40 initiatedAt)',
  'function refundNonce(bytes32) view returns (uint256)',
  'function receivers(address, address) view returns (uint128 totalClaimed, uint128 totalSettled)',
]);

/** @x402/evm 2.27 uses this collector for Permit2 deposits but does not export its address. */
const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS: Address = '0x4020425FAf3B746C082C2f942b4E5159887B0005';

export class LocalEvmChannelFacilitator implements ChannelFacilitator {
  readonly #scheme: BatchSettlementEvmScheme;
  readonly #public: PublicClient<Transport, Chain>;
  readonly #account: PrivateKeyAccount;
  readonly #sender: TransactionSender;

  constructor(options: LocalEvmChannelFacilitatorOptions) {
    this.#account = libsecp256k1Account(options.settlementPrivateKey);
    this.#public = evmChainClient(options.network, options.rpcUrl, options.pollingIntervalMs ?? 250);
    this.#sender = options.sender ?? evmSender({ client: this.#public, account: this.#account, chainId: options.network.chainId });
    const client = this.#public;
    const sender = this.#sender;
    const signer = toFacilitatorEvmSigner(
      {
        address: this.#account.address,
        readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
        verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
        // every transaction through the key's sender (its nonce sequence); a refused send throws, as viem would
        writeContract: async (args) => {
          const data = encodeFunctionData({ abi: args.abi as Abi, functionName: args.functionName, args: args.args } as Parameters<typeof encodeFunctionData>[0]);
          return sendOrThrow(sender, { to: args.address, data: args.dataSuffix ? (`${data}${args.dataSuffix.slice(2)}` as Hex) : data, ...(args.gas ? { gas: args.gas } : {}) });
        },
        sendTransaction: (args) => sendOrThrow(sender, { to: args.to, data: args.data }),
        waitForTransactionReceipt: (args) => client.waitForTransactionReceipt({ hash: args.hash, timeout: args.timeout ?? options.receiptTimeoutMs }),
        getCode: (args) => client.getCode(args),
      },
      { confirmationTimeoutMs: options.receiptTimeoutMs },
    );
    this.#scheme = new BatchSettlementEvmScheme(signer, this.#account);
  }

  get receiverAuthorizer(): string {
    return this.#account.address;
  }

  /** the official facilitator scheme submits a Permit2 deposit's EIP-2612 permit with it (through the collector) */
  readonly sponsorsPermits = true;

  async verify(proof: ChannelProof, requirement: PaymentRequirement): Promise<ChannelVerifyResult> {
    const verified = await this.#scheme.verify(...wire(proof, requirement));
    if (!verified.isValid) return { isValid: false, invalidReason: verified.invalidReason ?? 'invalid_batch_settlement_evm_payload', ...(verified.payer ? { payer: verified.payer } : {}) };
    const state = channelStateFromWire(verified.extra);
    if (!state) return { isValid: false, invalidReason: 'invalid_batch_settlement_evm_rpc_read_failed' };
    // the official scheme does not say how much a pending withdrawal takes: read it (only while one is pending)
    if (state.withdrawRequestedAt !== 0) state.withdrawAmount = (await this.#pendingWithdrawal(proof.payload.voucher.channelId)).amount;
    return { isValid: true, payer: verified.payer ?? '', state };
  }

  #pendingWithdrawal(channelId: string): Promise<{ amount: bigint; initiatedAt: number }> {
    return this.#public
      .readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: escrowAbi, functionName: 'pendingWithdrawals', args: [channelId as Hex] })
      .then(([amount, initiatedAt]) => ({ amount, initiatedAt }));
  }

  async settle(proof: ChannelProof<ChannelSubmission>, requirement: PaymentRequirement): Promise<ChannelSettleResult> {
    const settled = await this.#scheme.settle(...wire(proof, requirement));
    if (!settled.success) {
      const reason = settled.errorReason ?? 'invalid_batch_settlement_evm_settle_failed';
      return { success: false, errorReason: reason, transaction: settled.transaction ?? '', pending: reason === 'settlement_pending' };
    }
    const state = channelStateFromWire((settled.extra as Record<string, unknown> | undefined)?.channelState);
    const amount = settled.amount ? BigInt(settled.amount) : undefined;
    return { success: true, transaction: settled.transaction, ...(amount !== undefined ? { amount } : {}), ...(state ? { state } : {}) };
  }

  async readChannel(channelId: string): Promise<OnChainChannel> {
    const id = channelId as Hex;
    const [[balance, totalClaimed], withdrawal, refundNonce] = await Promise.all([
      this.#public.readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: escrowAbi, functionName: 'channels', args: [id] }),
      this.#pendingWithdrawal(id),
      this.#public.readContract({ address: BATCH_SETTLEMENT_CONTRACT, abi: escrowAbi, functionName: 'refundNonce', args: [id] }),
    ]);
    return { balance, totalClaimed, withdrawRequestedAt: withdrawal.initiatedAt, refundNonce, withdrawAmount: withdrawal.amount };
  }

  async unsettled(receiver: string, token: string): Promise<bigint> {
    const [claimed, settled] = await this.#public.readContract({
      address: BATCH_SETTLEMENT_CONTRACT,
      abi: escrowAbi,
      functionName: 'receivers',
      args: [receiver as Address, token as Address],
    });
    return claimed - settled;
  }

  async missingContracts(): Promise<string[]> {
    const contracts = [
      ['the batch-settlement escrow', BATCH_SETTLEMENT_CONTRACT],
      ['its ERC-3009 deposit collector', ERC3009_DEPOSIT_COLLECTOR_ADDRESS as Address],
      ['its Permit2 deposit collector', PERMIT2_DEPOSIT_COLLECTOR_ADDRESS],
    ] as const;
    const codes = await Promise.all(contracts.map(([, address]) => this.#public.getCode({ address })));
    return contracts.filter((_, i) => !codes[i] || codes[i] === '0x').map(([name, address]) => `${name} (${address})`);
  }
}

async function sendOrThrow(sender: TransactionSender, request: { to: Address; data: Hex; gas?: bigint }): Promise<Hex> {
  const sent = await sender.send(request);
  if (sent.status === 'rejected') throw sent.error instanceof Error ? sent.error : new Error(String(sent.error));
  return sent.transaction;
}

/** The official scheme's arguments: the payment and its requirements on the x402 v2 wire. */
function wire(proof: ChannelProof<object>, requirement: PaymentRequirement): [PaymentPayload, PaymentRequirements] {
  return [v2PaymentPayload(requirement, proof.payload, proof.extensions) as PaymentPayload, v2Requirements(requirement) as PaymentRequirements];
}
