// What the chain says of a payment whose outcome the paying process did not see (a hop lost the answer, the agent
// left a stream before its receipt came). Used, it moved money: an ERC-3009 authorization (`exact` on EVM) is charged
// its value, and so is a Permit2 permit of `exact`; what a used `upto` permit charged is not in its nonce, so the
// gateway's public record of the payment (GET /api/v1/payments/<key>) says what settled, at most the hold. Past its
// validity unused (an authorization's validBefore, a permit's deadline), it never can move money: the hold is
// released. Anything else stays held and is asked again later; a Solana transfer keeps its ceiling counted.
// The proof's facts go to the spend file, so a later process (after a restart) settles what an earlier one left.
import { parseAbi, type Address, type Hex } from 'viem';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PERMIT2_ADDRESS, uptoPaymentKey, type UptoPermit2Payload } from '../../x402/upto.ts';
import { NETWORKS, type EvmNetwork, type NetworkName } from '../../x402/networks.ts';
import type { Budget } from './budget.ts';
import type { OutcomeProof } from './spend-log.ts';

/** what the chain itself can be asked about (a voucher's outcome is the gateway's to tell: channel-lanes.ts) */
type ChainProof = Exclude<OutcomeProof, { type: 'voucher' }>;

/** What a paying process reads the chain with (a viem public client). */
export interface ChainReader {
  readContract(call: { address: Address; abi: readonly unknown[]; functionName: string; args: readonly unknown[] }): Promise<unknown>;
  getBlock(): Promise<{ timestamp: bigint }>;
}

const AUTHORIZATION_STATE = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);
const NONCE_BITMAP = parseAbi(['function nonceBitmap(address owner, uint256 wordPosition) view returns (uint256)']);

/** The chain's view of an EVM `exact` or `upto` payload; undefined for what the chain cannot be asked about here. */
export function chainProofOf(network: string, scheme: string, requirement: PaymentRequirements, payload: PaymentPayload['payload']): ChainProof | undefined {
  const { authorization, permit2Authorization } = payload as {
    authorization?: { from: Address; value: string; validBefore: string; nonce: Hex };
    permit2Authorization?: { from: Address; nonce: string; deadline: string };
  };
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

/** used: the money moved; void: it never can; open: it still may */
type Verdict = 'used' | 'void' | 'open';

async function verdictOf(proof: ChainProof, chain: ChainReader, now: bigint): Promise<Verdict> {
  if (proof.type === 'erc3009') {
    const used = (await chain.readContract({ address: proof.token, abi: AUTHORIZATION_STATE, functionName: 'authorizationState', args: [proof.from, proof.nonce] })) as boolean;
    // transferWithAuthorization requires block.timestamp < validBefore
    return used ? 'used' : now >= BigInt(proof.validBefore) ? 'void' : 'open';
  }
  const nonce = BigInt(proof.nonce);
  const word = (await chain.readContract({ address: PERMIT2_ADDRESS, abi: NONCE_BITMAP, functionName: 'nonceBitmap', args: [proof.from, nonce >> 8n] })) as bigint;
  if ((word >> (nonce & 0xffn)) & 1n) return 'used';
  // Permit2 requires block.timestamp <= deadline
  return now > BigInt(proof.deadline) ? 'void' : 'open';
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
      const { timestamp } = await this.#chain.getBlock();
      for (const [id, proof] of waiting) {
        const verdict = await verdictOf(proof, this.#chain, timestamp);
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
