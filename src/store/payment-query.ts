// WHERE clauses written once for both SQL engines: the operator queries (listPayments, revenue), whose engines
// differ only in how a parameter is written ($1 or ?) and how a time is passed (Date or ISO text), and the
// payment-identifier takeover rule.
import type { PaymentCursor, PaymentFilter } from './ledger.ts';

export interface SqlDialect {
  /** the placeholder of parameter number n (1-based) */
  param(n: number): string;
  /** how a Date filter is passed */
  time(value: Date): unknown;
}

export const SQLITE_DIALECT: SqlDialect = { param: () => '?', time: (value) => value.toISOString() };
export const POSTGRES_DIALECT: SqlDialect = { param: (n) => `$${n}`, time: (value) => value };

/**
 * `payer` is the address in parameter `exact`, or, for EVM addresses (stored checksummed, typed in any case), the
 * one in parameter `anyCase` whatever its letter case. Both parameters hold the address.
 */
export const payerMatch = (exact: string, anyCase: string) => `(payer = ${exact} OR (payer LIKE '0x%' AND lower(payer) = lower(${anyCase})))`;

/** Every condition ANDed; `extra` (a fixed SQL condition such as "state = 'settled'") comes first. */
export function paymentConditions(
  dialect: SqlDialect,
  filter: PaymentFilter,
  after?: PaymentCursor,
  extra: string[] = [],
): { where: string; params: unknown[] } {
  const conditions = [...extra];
  const params: unknown[] = [];
  const add = (value: unknown) => {
    params.push(value);
    return dialect.param(params.length);
  };
  if (filter.state !== undefined) conditions.push(`state = ${add(filter.state)}`);
  if (filter.network !== undefined) conditions.push(`network = ${add(filter.network)}`);
  if (filter.model !== undefined) conditions.push(`model = ${add(filter.model)}`);
  if (filter.payer !== undefined) {
    // EVM addresses are stored checksummed (mixed case) but typed in any case; base58 (Solana) is case-sensitive
    if (/^0x[0-9a-fA-F]*$/.test(filter.payer)) conditions.push(`lower(payer) = ${add(filter.payer.toLowerCase())}`);
    else conditions.push(`payer = ${add(filter.payer)}`);
  }
  if (filter.from !== undefined) conditions.push(`created_at >= ${add(dialect.time(filter.from))}`);
  if (filter.before !== undefined) conditions.push(`created_at < ${add(dialect.time(filter.before))}`);
  if (after !== undefined) {
    conditions.push(`(created_at < ${add(after.createdAt)} OR (created_at = ${add(after.createdAt)} AND key < ${add(after.key)}))`);
  }
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/**
 * bindPaymentId's takeover rule, the same SQL for both engines: an id bound to a payment that no longer stands
 * (released or failed: nothing was charged; or pruned) goes to the payment that comes with it now. Ids bound
 * before the payment key was recorded stay as they are.
 */
export const BOUND_PAYMENT_GONE = `payment_ids.payload_hash <> excluded.payload_hash AND payment_ids.payment_key IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM payments WHERE payments.key = payment_ids.payment_key AND payments.state NOT IN ('released', 'failed'))`;
