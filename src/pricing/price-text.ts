// Prices as people read them: decimal USDC beside the atomic units the protocol and the config use.
// Shared by the models listing, the /openapi.json descriptions (rendered at /docs) and the playground.
import { formatUsdc } from './usdc.ts';

/**
 * A model's capability and price in atomic units, as in the config (ModelConfig fits) and in GET
 * /api/v1/ai/models. Spelled out here so the browser playground can use this module without the config's.
 */
export type PricedModel =
  | { capability: 'chat'; price: { perRequest: string; perThousandOutputTokens: string; perThousandInputChars: string } }
  | { capability: 'image'; price: { perImageBySize: Record<string, string> } }
  | { capability: 'speech'; price: { perRequest: string; perThousandChars: string } };

const decimal = (atomic: string) => formatUsdc(BigInt(atomic));
const usdc = (atomic: string) => `${decimal(atomic)} USDC`;

/** The same price object with every atomic amount as decimal USDC ("1000" -> "0.001"). */
export function priceInUsdc(price: PricedModel['price']): Record<string, string | Record<string, string>> {
  return Object.fromEntries(
    Object.entries(price).map(([key, value]: [string, string | Record<string, string>]) => [
      key,
      typeof value === 'string' ? decimal(value) : Object.fromEntries(Object.entries(value).map(([size, atomic]) => [size, decimal(atomic)])),
    ]),
  );
}

/** What a call costs, in one line: "0.001 USDC per request + 0.002 USDC per 1,000 max_tokens + …". */
export function priceText(model: PricedModel): string {
  switch (model.capability) {
    case 'chat':
      return [
        `${usdc(model.price.perRequest)} per request`,
        `${usdc(model.price.perThousandOutputTokens)} per 1,000 max_tokens`,
        `${usdc(model.price.perThousandInputChars)} per 1,000 prompt characters`,
      ].join(' + ');
    case 'image':
      return `${Object.entries(model.price.perImageBySize)
        .map(([size, atomic]) => `${size}: ${usdc(atomic)}`)
        .join(', ')} per image`;
    case 'speech':
      return `${usdc(model.price.perRequest)} per request + ${usdc(model.price.perThousandChars)} per 1,000 characters`;
  }
}
