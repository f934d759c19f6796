// Prices a request from its body, in USDC atomic units. Integer arithmetic only: every fraction rounds up,
// so a quote never undercharges by a rounding error and never depends on floating point.
import type { ChatModelConfig, ImageModelConfig, SpeechModelConfig } from '../config/schema.ts';

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

/** What a chat answer of `outputTokens` costs: per request, per output token and per input character. */
function chatCost(model: ChatModelConfig, outputTokens: number, inputChars: number, cache?: PromptCache): bigint {
  const { perRequest, perThousandOutputTokens, perThousandInputChars } = model.price;
  return (
    BigInt(perRequest) +
    ceilDiv(BigInt(outputTokens) * BigInt(perThousandOutputTokens), 1000n) +
    cachedShare(model, ceilDiv(BigInt(inputChars) * BigInt(perThousandInputChars), 1000n), cache)
  );
}

/** Of a prompt's tokens as the model counted them, those it reports as read from its prompt cache. */
export interface PromptCache {
  inputTokens: number;
  cachedInputTokens: number;
}

/**
 * The input price once the model reports cache reads: the cached share of the prompt at the model's
 * cachedInputPercent of the price, the rest at full price, rounded up. Without a report, the full price.
 */
function cachedShare(model: ChatModelConfig, inputCost: bigint, cache: PromptCache | undefined): bigint {
  const percent = BigInt(model.cachedInputPercent ?? 100);
  if (!cache || percent === 100n || inputCost === 0n) return inputCost;
  const { inputTokens, cachedInputTokens } = cache;
  if (!Number.isSafeInteger(inputTokens) || !Number.isSafeInteger(cachedInputTokens) || inputTokens <= 0 || cachedInputTokens <= 0) return inputCost;
  const total = BigInt(inputTokens);
  const cached = BigInt(Math.min(cachedInputTokens, inputTokens));
  return ceilDiv(inputCost * (total * 100n - cached * (100n - percent)), total * 100n);
}

/** Chat is paid before the answer exists, so it is quoted on the most it may cost: max_tokens. */
export function quoteChat(model: ChatModelConfig, maxTokens: number, inputChars: number): bigint {
  return chatCost(model, maxTokens, inputChars);
}

/**
 * What a metered (`upto`) chat call is charged once its answer exists: the same price table applied to the
 * output tokens actually generated (and to the prompt's cache reads, when the model reports them), never
 * more than the ceiling the payer authorized.
 */
export function meteredChatCost(model: ChatModelConfig, outputTokens: number, inputChars: number, ceiling: bigint, cache?: PromptCache): bigint {
  if (!Number.isSafeInteger(outputTokens) || outputTokens < 0) throw new RangeError(`invalid output token count ${outputTokens}`);
  const cost = chatCost(model, outputTokens, inputChars, cache);
  return cost < ceiling ? cost : ceiling;
}

export function quoteImages(model: ImageModelConfig, size: string, n: number): bigint {
  const perImage = model.price.perImageBySize[size];
  if (perImage === undefined) throw new Error(`no price for size ${size} of ${model.id}`);
  return BigInt(perImage) * BigInt(n);
}

export function quoteSpeech(model: SpeechModelConfig, textChars: number): bigint {
  return BigInt(model.price.perRequest) + ceilDiv(BigInt(textChars) * BigInt(model.price.perThousandChars), 1000n);
}
