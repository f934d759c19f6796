// Any x402 facilitator over HTTP: POST /verify, POST /settle, GET /supported.
// Reason strings differ between facilitators; they are passed through as they come.
import { z } from 'zod';
import type { Facilitator, SettleOutcome, VerifyResult } from '../facilitator.ts';
import type { PaymentPayload, PaymentRequirements } from '../../x402/types.ts';
import type { Network } from '../../x402/networks.ts';

export interface RemoteFacilitatorOptions {
  url: string;
  network: Network;
  /** sent as the Authorization header, e.g. "Bearer ..." */
  authorization?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
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
});

export class RemoteFacilitator implements Facilitator {
  private readonly options: RemoteFacilitatorOptions;
  private readonly base: string;

  constructor(options: RemoteFacilitatorOptions) {
    this.options = options;
    this.base = options.url.replace(/\/+$/, '');
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

  private request(payload: PaymentPayload, requirements: PaymentRequirements) {
    return { x402Version: payload.x402Version, paymentPayload: payload, paymentRequirements: requirements };
  }

  async requirementExtra(): Promise<Record<string, unknown>> {
    const supported = supportedResponse.parse(await this.call('GET', '/supported'));
    const kind = supported.kinds.find(
      (k) => k.x402Version === 1 && k.scheme === 'exact' && k.network === this.options.network.name,
    );
    if (!kind) throw new Error(`facilitator ${this.base} does not support exact payments on ${this.options.network.name}`);
    return kind.extra ?? {};
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult> {
    const result = verifyResponse.parse(await this.call('POST', '/verify', this.request(payload, requirements)));
    if (result.isValid) return { isValid: true, payer: result.payer ?? '' };
    return { isValid: false, invalidReason: result.invalidReason ?? 'rejected_by_facilitator', payer: result.payer ?? undefined };
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleOutcome> {
    let json: unknown;
    try {
      json = await this.call('POST', '/settle', this.request(payload, requirements));
    } catch (error) {
      // The request may have reached the facilitator and been broadcast: we cannot say it failed.
      return { status: 'unknown', reason: (error as Error).message, payer: '', transaction: '' };
    }
    const result = settleResponse.parse(json);
    if (result.success && result.transaction) {
      return { status: 'settled', transaction: result.transaction, payer: result.payer ?? '' };
    }
    return {
      status: 'failed',
      reason: result.errorReason ?? 'settlement_rejected_by_facilitator',
      payer: result.payer ?? undefined,
      transaction: result.transaction ?? undefined,
    };
  }

  async checkSettlement(payload: PaymentPayload, requirements: PaymentRequirements, transaction: string): Promise<SettleOutcome> {
    // A facilitator has no status API: settling the same authorization again is idempotent on-chain —
    // it fails if the first one landed (nonce used) and lands now if the first one never did.
    const verification = await this.verify(payload, requirements);
    if (!verification.isValid && /nonce|already|used|replay/i.test(verification.invalidReason)) {
      return { status: 'settled', transaction, payer: verification.payer ?? '' };
    }
    return { status: 'unknown', reason: 'facilitator cannot tell yet', payer: verification.payer ?? '', transaction };
  }
}
