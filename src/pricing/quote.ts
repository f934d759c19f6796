// Prices a request from its body, in USDC atomic units. Integer arithmetic only: every fraction rounds up,
// so a quote never undercharges by a rounding error and never depends on floating point.
import type { ChatModelConfig, ImageModelConfig, SpeechModelConfig } from '../config/schema.ts';

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

/** Chat is paid before the answer exists, so it is priced on the most it may cost: max_tokens. */
export function quoteChat(model: ChatModelConfig, maxTokens: number, inputChars: number): bigint {
  const { perRequest, perThousandOutputTokens, perThousandInputChars } = model.price;
  return (
    BigInt(perRequest) +
    ceilDiv(BigInt(maxTokens) * BigInt(perThousandOutputTokens), 1000n) +
    ceilDiv(BigInt(inputChars) * BigInt(perThousandInputChars), 1000n)
  );
}

export function quoteImages(model: ImageModelConfig, size: string, n: number): bigint {
  const perImage = model.price.perImageBySize[size];
  if (perImage === undefined) throw new Error(`no price for size ${size} of ${model.id}`);
  return BigInt(perImage) * BigInt(n);
}

export function quoteSpeech(model: SpeechModelConfig, textChars: number): bigint {
  return BigInt(model.price.perRequest) + ceilDiv(BigInt(textChars) * BigInt(model.price.perThousandChars), 1000n);
}
