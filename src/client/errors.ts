// What a buyer can be told went wrong, with nothing signed or paid unless the error says so.
import { formatUsdc } from './usdc.ts';

export class MaxPriceExceededError extends Error {
  override name = 'MaxPriceExceededError';
  readonly price: bigint;
  readonly maxPrice: bigint;
  constructor(price: bigint, maxPrice: bigint) {
    super(`the quote, ${formatUsdc(price)} USDC (${price} atomic units), is above maxPrice, ${formatUsdc(maxPrice)} USDC; nothing was signed`);
    this.price = price;
    this.maxPrice = maxPrice;
  }
}

export class GatewayError extends Error {
  override name = 'GatewayError';
  readonly status: number;
  readonly code: string | undefined;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    const record = (body ?? {}) as { error?: unknown; code?: unknown };
    super(`gateway answered ${status}: ${typeof record.error === 'string' ? record.error : JSON.stringify(body)}`);
    this.status = status;
    this.code = typeof record.code === 'string' ? record.code : undefined;
    this.body = body;
  }
}

/** The server could not be reached at all (refused, unknown host, reset...): nothing was paid. */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
  readonly url: string;
  constructor(url: string, reason: string, cause?: unknown) {
    super(`cannot reach ${url}: ${reason}`, { cause });
    this.url = url;
  }
}

/** The gateway offers no payment on the network asked for (its 402 lists the others): nothing was signed. */
export class NetworkNotOfferedError extends Error {
  override name = 'NetworkNotOfferedError';
  readonly network: string;
  readonly offered: string[];
  constructor(network: string, offered: string[]) {
    super(`the gateway takes no payment on ${network}; it offers: ${offered.join(', ') || 'none'}; nothing was signed`);
    this.network = network;
    this.offered = offered;
  }
}

/** Every offer of a 402 on the network asked for names terms this library does not sign (offer-terms.ts): nothing was signed. */
export class OfferRefusedError extends Error {
  override name = 'OfferRefusedError';
}
