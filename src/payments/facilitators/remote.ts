// Any x402 facilitator over HTTP: POST /verify, POST /settle, GET /supported.
// It talks x402 v2 to a facilitator whose /supported lists a v2 kind for our scheme and network, v1 to the
// others, whichever wire the client's proof came on (the internal model is version-free).
// One instance serves one scheme: `exact` (default), or `upto` (v2 only), whose settle sends the metered amount
// as the requirement's `amount` (the official facilitator settles exactly that, at most the signed ceiling).
// Reason strings differ between facilitators; they are passed through as they come.
import { z } from 'zod';
import { FacilitatorUnavailableError, type Facilitator, type SettleOutcome, type VerifyResult } from '../facilitator.ts';
import type { Network } from '../../x402/networks.ts';
import type { PaymentProof, PaymentRequirement, Wire } from '../../x402/model.ts';
import { v1Requirement } from '../../x402/v1/codec.ts';
import { v2Requirements } from '../../x402/v2/codec.ts';
import { SETTLEMENT_REJECTED_BY_FACILITATOR, UNEXPECTED_VERIFY_ERROR } from '../reasons.ts';

export interface RemoteFacilitatorOptions {
  url: string;
  network: Network;
  /** sent as the Authorization header, e.g. "Bearer ..." */
  authorization?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** the scheme this instance verifies and settles; default exact */
  scheme?: 'exact' | 'upto';
}

/** What /supported says about `upto` on our network: the key the payer's witness must name, the gas-sponsoring extensions. */
export interface RemoteUptoSupport {
  facilitatorAddress: string;
  extensions: string[];
}

const verifyResponse = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().nullish(),
  payer: z.string().nullish(),
});
const settleResponse = z.object({
  success: z.boolean(),
  errorReason: z.string().nullish(),
  transaction: z.string().nullish(),
  network: z.string().nullish(),
  payer: z.string().nullish(),
});
const supportedResponse = z.object({
  kinds: z.array(
    z.object({
      x402Version: z.number(),
      scheme: z.string(),
      network: z.string(),
      extra: z.record(z.string(), z.unknown()).nullish(),
    }),
  ),
  /** v2: the extension keys the facilitator carries out (e.g. eip2612GasSponsoring) */
  extensions: z.array(z.string()).nullish(),
});

export class RemoteFacilitator implements Facilitator {
  private readonly options: RemoteFacilitatorOptions;
  private readonly base: string;
  private readonly scheme: 'exact' | 'upto';
  /** the protocol version /supported offers for our scheme on our network (v2 preferred); read on first need */
  private version: Promise<Wire> | undefined;

  constructor(options: RemoteFacilitatorOptions) {
    this.options = options;
    this.base = options.url.replace(/\/+$/, '');
    this.scheme = options.scheme ?? 'exact';
    // upto exists only in x402 v2
    if (this.scheme === 'upto') this.version = Promise.resolve(2);
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.options.authorization) headers.Authorization = this.options.authorization;
    const response = await (this.options.fetch ?? fetch)(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`facilitator ${path} answered ${response.status} with a non-JSON body`);
    }
    // Facilitators answer rejected payments with 400 and a JSON reason: that is an answer, not a fault.
    if (response.status >= 500) throw new Error(`facilitator ${path} answered ${response.status}`);
    return json;
  }

  /** Our scheme's kinds /supported lists for our network (v2 ones name it by CAIP-2, v1 ones by name), and its extensions. */
  private async supportedKinds() {
    const supported = supportedResponse.parse(await this.call('GET', '/supported'));
    const { name, caip2 } = this.options.network;
    const v2 = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === this.scheme && k.network === caip2);
    const v1 = supported.kinds.find((k) => k.x402Version === 1 && k.scheme === this.scheme && k.network === name);
    return { v2, v1, extensions: supported.extensions ?? [] };
  }

  /**
   * Whether the facilitator settles `upto` on our network (a v2 kind naming the facilitator address the payer's
   * witness must carry): undefined when it does not. Throws when /supported cannot be read.
   */
  async uptoSupport(): Promise<RemoteUptoSupport | undefined> {
    const { v2, extensions } = await this.supportedKinds();
    const facilitatorAddress = v2?.extra?.facilitatorAddress;
    if (typeof facilitatorAddress !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(facilitatorAddress)) return undefined;
    return { facilitatorAddress, extensions };
  }

  private protocolVersion(): Promise<Wire> {
    this.version ??= this.supportedKinds().then(({ v2 }) => (v2 ? 2 : 1));
    // a failed look-up is tried again next time
    this.version.catch(() => (this.version = undefined));
    return this.version;
  }

  /** `settledAmount` (upto's settle): the amount to move, sent as the requirement's; the payload keeps the ceiling it accepted. */
  private async request(proof: PaymentProof, requirement: PaymentRequirement, settledAmount?: bigint) {
    if ((await this.protocolVersion()) === 2) {
      const accepted = v2Requirements(requirement);
      // the client's extensions go along: a facilitator carries out gas sponsoring from them
      const paymentPayload = { x402Version: 2, accepted, payload: proof.payload, ...(proof.extensions ? { extensions: proof.extensions } : {}) };
      const paymentRequirements = settledAmount === undefined ? accepted : { ...accepted, amount: settledAmount.toString() };
      return { x402Version: 2, paymentPayload, paymentRequirements };
    }
    const route = { url: requirement.resource?.url ?? '', description: requirement.resource?.description ?? '', bodyFields: {} };
    const paymentPayload = { x402Version: 1, scheme: proof.scheme, network: proof.network, payload: proof.payload };
    return { x402Version: 1, paymentPayload, paymentRequirements: v1Requirement(requirement, route) };
  }

  async requirementExtra(): Promise<Record<string, unknown>> {
    const { v2, v1 } = await this.supportedKinds();
    const kind = v2 ?? v1;
    if (!kind) throw new Error(`facilitator ${this.base} does not support ${this.scheme} payments on ${this.options.network.name}`);
    this.version = Promise.resolve(v2 ? 2 : 1);
    return kind.extra ?? {};
  }

  async verify(proof: PaymentProof, requirement: PaymentRequirement): Promise<VerifyResult> {
    const result = verifyResponse.parse(await this.call('POST', '/verify', await this.request(proof, requirement)));
    if (result.isValid) return { isValid: true, payer: result.payer ?? '' };
    // the official facilitator's answer when its own RPC failed it: no verdict on the payment
    if (result.invalidReason === UNEXPECTED_VERIFY_ERROR) throw new FacilitatorUnavailableError('remote facilitator verification');
    return { isValid: false, invalidReason: result.invalidReason ?? 'rejected_by_facilitator', payer: result.payer ?? undefined };
  }

  async settle(proof: PaymentProof, requirement: PaymentRequirement, amount?: bigint): Promise<SettleOutcome> {
    // upto moves the metered amount (never above the ceiling: the facilitator refuses that); exact its price
    const settledAmount = this.scheme === 'upto' ? (amount ?? requirement.amount) : undefined;
    let json: unknown;
    try {
      json = await this.call('POST', '/settle', await this.request(proof, requirement, settledAmount));
    } catch (error) {
      // The request may have reached the facilitator and been broadcast: we cannot say it failed.
      return { status: 'unknown', reason: (error as Error).message, payer: '', transaction: '' };
    }
    const result = settleResponse.parse(json);
    // an upto settlement of 0 moves nothing: success without a transaction
    if (result.success && (result.transaction || settledAmount === 0n)) {
      return { status: 'settled', transaction: result.transaction ?? '', payer: result.payer ?? '' };
    }
    return {
      status: 'failed',
      reason: result.errorReason ?? SETTLEMENT_REJECTED_BY_FACILITATOR,
      payer: result.payer ?? undefined,
      transaction: result.transaction ?? undefined,
    };
  }

  async checkSettlement(proof: PaymentProof, requirement: PaymentRequirement, transaction: string): Promise<SettleOutcome> {
    // A facilitator has no status API: settling the same authorization again is idempotent on-chain —
    // it fails if the first one landed (nonce used) and lands now if the first one never did.
    const verification = await this.verify(proof, requirement);
    if (!verification.isValid && /nonce|already|used|replay/i.test(verification.invalidReason)) {
      return { status: 'settled', transaction, payer: verification.payer ?? '' };
    }
    return { status: 'unknown', reason: 'facilitator cannot tell yet', payer: verification.payer ?? '', transaction };
  }
}
