// What a buyer can be told went wrong, with nothing signed or paid unless the error says so.

export class MaxPriceExceededError extends Error {
  override name = 'MaxPriceExceededError';
  readonly price: bigint;
  readonly maxPrice: bigint;
  constructor(price: bigint, maxPrice: bigint) {
    super(`the quote (${price} atomic units) is above maxPrice (${maxPrice}); nothing was signed`);
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
