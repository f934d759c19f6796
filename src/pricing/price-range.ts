// The cheapest and the dearest call a capability can cost, over every model of the catalog: what discovery
// (x-payment-info, llms.txt) advertises. Computed with the same quote functions as a real call, so the
// advertised range can never drift from what a 402 asks.
import type { Capability, ModelConfig } from '../config/schema.ts';
import { quoteChat, quoteImages, quoteSpeech } from './quote.ts';

export interface PriceRange {
  /** atomic units of USDC */
  min: bigint;
  max: bigint;
}

/**
 * One model's range. Chat's largest prompt is bounded by the model's maxInputChars, else by the body limit (a
 * character is at least one byte of JSON), so its max is an upper bound; the smallest call asks one token of an
 * empty prompt.
 */
export function modelPriceRange(model: ModelConfig, bodyLimitBytes: number): PriceRange {
  switch (model.capability) {
    case 'chat':
      return { min: quoteChat(model, 1, 0), max: quoteChat(model, model.maxTokens, Math.min(bodyLimitBytes, model.maxInputChars ?? Infinity)) };
    case 'image': {
      const perSize = model.sizes.map((size) => quoteImages(model, size, 1));
      return { min: smallest(perSize), max: largest(perSize) * BigInt(model.maxN) };
    }
    case 'speech':
      return { min: quoteSpeech(model, 1), max: quoteSpeech(model, model.maxTextLength) };
  }
}

/** The range over every model of a capability; undefined when the catalog has none. */
export function capabilityPriceRange(models: readonly ModelConfig[], capability: Capability, bodyLimitBytes: number): PriceRange | undefined {
  const ranges = models.filter((model) => model.capability === capability).map((model) => modelPriceRange(model, bodyLimitBytes));
  if (ranges.length === 0) return undefined;
  return { min: smallest(ranges.map((range) => range.min)), max: largest(ranges.map((range) => range.max)) };
}

const smallest = (values: bigint[]) => values.reduce((a, b) => (b < a ? b : a));
const largest = (values: bigint[]) => values.reduce((a, b) => (b > a ? b : a));
