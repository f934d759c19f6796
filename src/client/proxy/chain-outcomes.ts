// What the chain says of a payment whose outcome the paying process did not see (a hop lost the answer, the agent
// left a stream before its receipt came). Used, it moved money: an ERC-3009 authorization (`exact` on EVM) is charged
// its value, and so is a Permit2 permit of `exact`; what a used `upto` permit charged is not in its nonce, so the
// gateway's public record of the payment (GET /api/v1/payments/<key>) says what settled, at most the hold. Past its
// validity unused (an authorization's validBefore, a permit's deadline), it never can move money: the hold is
// released. A Solana transfer is judged once its blockhash has expired, when nothing more can land: found among the
// payer's transactions by the payer's own signature, it is charged; not found (or failed), released. Anything else
// stays held and is asked again later.
// The proof's facts go to the spend file, so a later process (after a restart) settles what an earlier one left.
import { getBase58Decoder, getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import { parseAbi, type Address, type Hex } from 'viem';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PERMIT2_ADDRESS, uptoPaymentKey, type UptoPermit2Payload } from '../../x402/upto.ts';
import { NETWORKS, type EvmNetwork, type NetworkName } from '../../x402/networks.ts';
import type { Budget } from './budget.ts';
import type { OutcomeProof } from './spend-log.ts';

/** what the chain itself can be asked about (a voucher's outcome is the gateway's to tell: channel-lanes.ts) */
type ChainProof = Exclude<OutcomeProof, { type: 'voucher' }>;

/** What a paying process reads an EVM chain with (a viem public client). */
export interface EvmChainReader {
  readContract(call: { address: Address; abi: readonly unknown[]; functionName: string; args: readonly unknown[] }): Promise<unknown>;
  getBlock(): Promise<{ timestamp: bigint }>;
}

/** What a paying process reads a Solana chain with (svm-chain-reader.ts), at the confirmed commitment. */
export interface SvmChainReader {
  /** false once no transaction with this blockhash can land any more */
  isBlockhashValid(blockhash: string): Promise<boolean>;
  /** among `owner`'s transactions since `since` (epoch ms), the one that carries `signature`: whether it failed */
  transactionSignedWith(owner: string, signature: string, since: number): Promise<{ failed: boolean } | undefined>;
}

export type ChainReader = EvmChainReader | SvmChainReader;

const AUTHORIZATION_STATE = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);
const NONCE_BITMAP = parseAbi(['function nonceBitmap(address owner, uint256 wordPosition) view returns (uint256)']);

/**
 * The chain's view of an `exact` or `upto` payload signed at `signedAt` (epoch ms); undefined for what the chain cannot
 * be asked about here.
 */
export function chainProofOf(network: string, scheme: string, requirement: PaymentRequirements, payload: PaymentPayload['payload'], signedAt: number): ChainProof | undefined {
  const { authorization, permit2Authorization, transaction } = payload as {
    authorization?: { from: Address; value: string; validBefore: string; nonce: Hex };
    permit2Authorization?: { from: Address; nonce: string; deadline: string };
    transaction?: unknown;
  };
  if (typeof transaction === 'string') return svmProofOf(network, requirement, transaction, signedAt);
  if (authorization) {
    const { from, nonce, value, validBefore } = authorization;
    return { type: 'erc3009', network, token: requirement.asset as Address, from, nonce, value, validBefore };
  }
  if (permit2Authorization) {
    const { from, nonce, deadline } = permit2Authorization;
    const { chainId } = NETWORKS[network as NetworkName] as EvmNetwork;
    const settledBy = scheme === 'exact' ? { value: requirement.amount } : { key: uptoPaymentKey(chainId, payload as UptoPermit2Payload) };
    return { type: 'permit2', network, from, nonce, deadline, ...settledBy };
  }
  return undefined;
}

/** A Solana `exact` payload: the transfer the payer signed, its fee payer's signature still to come. */
function svmProofOf(network: string, requirement: PaymentRequirements, transaction: string, signedAt: number): ChainProof | undefined {
  try {
    const { messageBytes, signatures } = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
    // the payer's is the one signature made: the fee payer signs when it settles
    const signed = Object.entries(signatures).filter((entry): entry is [string, NonNullable<(typeof entry)[1]>] => entry[1] !== null);
    const [payer, signature] = signed.length === 1 ? signed[0]! : [];
    if (payer === undefined || signature === undefined) return undefined;
    const { lifetimeToken } = getCompiledTransactionMessageDecoder().decode(messageBytes);
    return { type: 'svm', network, payer, signature: getBase58Decoder().decode(signature), blockhash: lifetimeToken, value: requirement.amount, at: signedAt };
  } catch {
    return undefined; // not a transaction this reader knows: it keeps its hold
  }
}

/** used: the money moved; void: it never can; open: it still may */
type Verdict = 'used' | 'void' | 'open';

/** `clock(chain)`: the EVM chain's time, read once an asking and only when a proof's validity needs it */
async function verdictOf(proof: ChainProof, chain: ChainReader, clock: (chain: EvmChainReader) => Promise<bigint>): Promise<Verdict> {
  if (proof.type === 'svm') {
    if (!('transactionSignedWith' in chain)) return 'open';
    // asked first: once the blockhash has expired, whatever could land has, so the search below is final
    if (await chain.isBlockhashValid(proof.blockhash)) return 'open';
    const landed = await chain.transactionSignedWith(proof.payer, proof.signature, proof.at);
    // a transaction that landed and failed moved no tokens (its fee was the fee payer's)
    return landed && !landed.failed ? 'used' : 'void';
  }
  if (!('readContract' in chain)) return 'open';
  if (proof.type === 'erc3009') {
    const used = (await chain.readContract({ address: proof.token, abi: AUTHORIZATION_STATE, functionName: 'authorizationState', args: [proof.from, proof.nonce] })) as boolean;
    // transferWithAuthorization requires block.timestamp < validBefore
    return used ? 'used' : (await clock(chain)) >= BigInt(proof.validBefore) ? 'void' : 'open';
  }
  const nonce = BigInt(proof.nonce);
  const word = (await chain.readContract({ address: PERMIT2_ADDRESS, abi: NONCE_BITMAP, functionName: 'nonceBitmap', args: [proof.from, nonce >> 8n] })) as bigint;
  if ((word >> (nonce & 0xffn)) & 1n) return 'used';
  // Permit2 requires block.timestamp <= deadline
  return (await clock(chain)) > BigInt(proof.deadline) ? 'void' : 'open';
}

/**
 * Settles the holds of `network`'s payments whose outcome is unknown, as the chain tells; `settle()` asks it. A chain
 * that cannot be read settles nothing (asked again next time).
 */
export class ChainOutcomes {
  readonly #budget: Budget;
  readonly #chain: ChainReader;
  readonly #network: string;
  readonly #gateway: { url: string; fetch: typeof fetch } | undefined;
  /** used permits whose charge no one can tell (no gateway record): not asked again */
  readonly #usedUnknownAmount = new Set<string>();
  #asking: Promise<void> | undefined;

  /** `gateway`: where the public record of a payment says what an `upto` permit settled */
  constructor(budget: Budget, chain: ChainReader, network: string, gateway?: { url: string; fetch: typeof fetch }) {
    this.#budget = budget;
    this.#chain = chain;
    this.#network = network;
    this.#gateway = gateway;
  }

  /** true when a payment of this network waits for the chain's word */
  get waiting(): boolean {
    return this.#waiting(this.#budget.state.unknown).length > 0;
  }

  #waiting(unknown: ReadonlyMap<string, OutcomeProof>): Array<[string, ChainProof]> {
    return [...unknown].filter((entry): entry is [string, ChainProof] => {
      const [id, proof] = entry;
      return proof.type !== 'voucher' && proof.network === this.#network && !this.#usedUnknownAmount.has(id);
    });
  }

  /** Asks the chain about every payment waiting for its word (one asking at a time: a second call joins it). */
  settle(): Promise<void> {
    this.#asking ??= this.#ask().finally(() => (this.#asking = undefined));
    return this.#asking;
  }

  async #ask(): Promise<void> {
    try {
      const waiting = this.#waiting(this.#budget.refresh().unknown);
      if (waiting.length === 0) return;
      let timestamp: Promise<bigint> | undefined;
      const clock = (chain: EvmChainReader) => (timestamp ??= chain.getBlock().then((block) => block.timestamp));
      for (const [id, proof] of waiting) {
        const verdict = await verdictOf(proof, this.#chain, clock);
        if (verdict === 'void') this.#budget.released(id);
        else if (verdict === 'used' && proof.value !== undefined) this.#budget.charged(id, BigInt(proof.value));
        else if (verdict === 'used') await this.#settledAtGateway(id, proof.type === 'permit2' ? proof.key : undefined);
      }
    } catch {
      // the chain did not answer (or the spend file is closed): the holds stay as they are, asked again next time
    }
  }

  /**
   * A used permit whose charge the chain's nonce does not tell: the gateway's public record of the payment says what
   * settled (at most the hold: Budget.charged). One the gateway has no record of keeps its ceiling, not asked again.
   */
  async #settledAtGateway(id: string, key: string | undefined): Promise<void> {
    if (!this.#gateway || key === undefined) {
      this.#usedUnknownAmount.add(id);
      return;
    }
    const answer = await this.#gateway.fetch(`${this.#gateway.url}/api/v1/payments/${encodeURIComponent(key)}`, { signal: AbortSignal.timeout(10_000) });
    if (answer.status === 404) this.#usedUnknownAmount.add(id);
    const record = (answer.ok ? await answer.json() : await answer.arrayBuffer().then(() => undefined)) as { state?: unknown; settledAmount?: unknown } | undefined;
    if (record?.state === 'settled' && typeof record.settledAmount === 'string' && /^\d+$/.test(record.settledAmount)) this.#budget.charged(id, BigInt(record.settledAmount));
  }
}
