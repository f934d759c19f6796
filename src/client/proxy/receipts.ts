// What the gateway says a paid call cost: the x402 v2 SettleResponse (PAYMENT-RESPONSE, MCP's
// `_meta["x402/payment-response"]`) or the receipt a stream's last event carries (`x402`: success, transaction,
// network, payer, amount). Both are read as one shape.
import type { PaymentRequirements } from '@x402/core/types';

export interface Receipt {
  success: boolean;
  transaction?: string;
  network?: string;
  payer?: string;
  /** exact: the price; upto: what was settled; channels: the deposit ('' without one), in a header and a stream alike (the charge is extra.chargedAmount) */
  amount?: string;
  errorReason?: string;
  extra?: { chargedAmount?: unknown; channelState?: { chargedCumulativeAmount?: unknown } } & Record<string, unknown>;
}

const atomic = (value: unknown): bigint | undefined => (typeof value === 'string' && /^\d{1,40}$/.test(value) ? BigInt(value) : undefined);

/**
 * What a delivered call was charged, by its scheme; an unreadable receipt counts the whole ceiling (the caps never
 * count less than what may have moved).
 */
export function chargeOf(scheme: string, receipt: Receipt, requirement: PaymentRequirements): bigint {
  const ceiling = BigInt(requirement.amount);
  if (scheme === 'exact') return ceiling;
  const charged = scheme === 'batch-settlement' ? (atomic(receipt.extra?.chargedAmount) ?? atomic(receipt.amount)) : atomic(receipt.amount);
  return charged === undefined || charged > ceiling ? ceiling : charged;
}

/** The receipt and usage a stream carries in its events, found as the bytes pass (nothing is held back). */
export class StreamTap {
  #event: Buffer[] = [];
  #eventBytes = 0;
  receipt: Receipt | undefined;
  usage: { promptTokens?: number; completionTokens?: number } = {};
  model: string | undefined;

  /** Looks at a chunk of the stream on its way to the client. */
  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf('\n\n'); end !== -1; end = chunk.indexOf('\n\n', start)) {
      this.#add(chunk.subarray(start, end));
      this.#close();
      start = end + 2;
    }
    if (start < chunk.length) this.#add(chunk.subarray(start));
  }

  end(): void {
    this.#close();
  }

  #add(piece: Buffer): void {
    // an event past a few megabytes is no receipt: its bytes are passed on unread
    if (this.#eventBytes > 8 * 1024 * 1024) return;
    this.#event.push(piece);
    this.#eventBytes += piece.length;
  }

  /** One whole event: only those naming `x402` or usage are parsed. */
  #close(): void {
    if (this.#event.length === 0) return;
    const event = this.#event.length === 1 ? this.#event[0]! : Buffer.concat(this.#event);
    this.#event = [];
    this.#eventBytes = 0;
    if (event.indexOf('"x402"') === -1 && event.indexOf('"usage"') === -1) return;
    for (const line of event.toString('utf8').split('\n')) {
      if (!line.startsWith('data:')) continue;
      let data: Record<string, any>;
      try {
        data = JSON.parse(line.slice(5));
      } catch {
        continue;
      }
      if (data?.x402 && typeof data.x402 === 'object') this.receipt = data.x402 as Receipt;
      this.#readUsage(data);
    }
  }

  /** usage as each surface reports it: OpenAI chat chunks, Responses' response, Anthropic's message events */
  #readUsage(data: Record<string, any>): void {
    const usage = data.usage ?? data.response?.usage ?? data.message?.usage;
    const model = data.model ?? data.response?.model ?? data.message?.model;
    if (typeof model === 'string') this.model = model;
    if (!usage || typeof usage !== 'object') return;
    const prompt = usage.prompt_tokens ?? usage.input_tokens;
    const completion = usage.completion_tokens ?? usage.output_tokens;
    if (typeof prompt === 'number' && prompt > 0) this.usage.promptTokens = prompt;
    if (typeof completion === 'number') this.usage.completionTokens = completion;
  }
}

/** the words every gateway answer uses when a paid call moved nothing (its error body, a stream's failure event, a tool's error) */
export const NOTHING_CHARGED = 'nothing was charged';
/** an answer's last bytes kept: an error body or a stream's last event is far shorter */
const TAIL_BYTES = 16 * 1024;

/**
 * The last bytes of a paid call's answer without a receipt, as they pass: whether the gateway said that nothing was
 * charged. Anything else (a 504 of a load balancer, a receipt some hop stripped) leaves the outcome unknown, and the
 * hold counted.
 */
export class AnswerTail {
  #chunks: Buffer[] = [];
  #bytes = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - this.#chunks[0]!.length >= TAIL_BYTES) this.#bytes -= this.#chunks.shift()!.length;
  }

  saysNothingCharged(): boolean {
    return Buffer.concat(this.#chunks).includes(NOTHING_CHARGED);
  }
}
