// Query strings of the operator API, parsed strictly: an unknown or repeated parameter, a bad date or a forged
// cursor is a 400 naming it, never a silently wider listing.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { parseOrThrow } from '../../api/validate.ts';
import { PAYMENT_STATES, type PaymentCursor, type PaymentFilter } from '../../store/ledger.ts';
import { NETWORK_NAMES, resolveNetworkName } from '../../x402/networks.ts';

export const DEFAULT_PAGE_SIZE = 50;
/** the channel listing's page when none is asked (channels are fewer than payments) */
export const DEFAULT_CHANNELS_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 500;

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A UTC date (YYYY-MM-DD) or an ISO 8601 date-time with Z or an offset. */
const when = z
  .string()
  .max(40)
  .refine(
    (value) => (DATE_ONLY.test(value) ? isCalendarDate(value) : z.iso.datetime({ offset: true }).safeParse(value).success),
    'a date (YYYY-MM-DD, UTC) or an ISO 8601 date-time (2030-01-31T12:00:00Z)',
  );

/** 2030-02-30 parses (as March 2nd): only a date that prints back as itself is one. */
function isCalendarDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

const network = z
  .string()
  .max(100)
  .transform((value, context) => {
    const name = resolveNetworkName(value);
    if (!name) context.addIssue({ code: 'custom', message: `not a network; supported values: ${NETWORK_NAMES.join(', ')}` });
    return name ?? value;
  });

const timeRange = { from: when.optional(), to: when.optional() };
const limit = z.string().regex(/^\d{1,9}$/, `a whole number from 1 (at most ${MAX_PAGE_SIZE} are returned)`).optional();

const paymentsQuery = z
  .object({
    state: z.enum(PAYMENT_STATES).optional(),
    network: network.optional(),
    model: z.string().min(1).max(100).optional(),
    payer: z.string().min(1).max(100).optional(),
    ...timeRange,
    limit,
    cursor: z.string().max(1_000).optional(),
  })
  .strict();

const revenueQuery = z.object(timeRange).strict();

const channelsQuery = z
  .object({
    network: network.optional(),
    payer: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address').optional(),
    limit,
  })
  .strict();

/** limit= of a listing: at least 1, larger values capped at MAX_PAGE_SIZE */
function pageSize(text: string | undefined, fallback: number): number {
  const size = text === undefined ? fallback : Number(text);
  if (size < 1) throw new ApiError(400, 'invalid_request', 'limit: must be at least 1', { field: 'limit' });
  return Math.min(size, MAX_PAGE_SIZE);
}

function queryObject(url: string): Record<string, string> {
  const params = new URL(url).searchParams;
  const query: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in query) throw new ApiError(400, 'invalid_request', `${name}: given more than once`, { field: name });
    query[name] = value;
  }
  return query;
}

/** `from` is inclusive; `to` is exclusive as a date-time, and includes its whole day as a date. */
function range(query: { from?: string | undefined; to?: string | undefined }): Pick<PaymentFilter, 'from' | 'before'> {
  const start = (value: string) => new Date(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  const from = query.from === undefined ? undefined : start(query.from);
  const before =
    query.to === undefined ? undefined : new Date(start(query.to).getTime() + (DATE_ONLY.test(query.to) ? DAY_MS : 0));
  if (from && before && from >= before) throw new ApiError(400, 'invalid_request', 'to: must be after from', { field: 'to' });
  return { ...(from ? { from } : {}), ...(before ? { before } : {}) };
}

/** The opaque `cursor` of a page: base64url of [createdAt, key] of the page's last row. */
export function encodeCursor(cursor: PaymentCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.key])).toString('base64url');
}

function decodeCursor(text: string): PaymentCursor {
  const invalid = new ApiError(400, 'invalid_request', 'cursor: not a cursor this API returned', { field: 'cursor' });
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalid;
  const [createdAt, key] = decoded as unknown[];
  if (typeof createdAt !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(createdAt)) throw invalid;
  if (Number.isNaN(Date.parse(createdAt)) || typeof key !== 'string' || key.length === 0 || key.length > 300) throw invalid;
  return { createdAt, key };
}

export interface PaymentsQuery {
  filter: PaymentFilter;
  limit: number;
  after: PaymentCursor | undefined;
}

export function parsePaymentsQuery(url: string): PaymentsQuery {
  const query = parseOrThrow(paymentsQuery, queryObject(url));
  const filter: PaymentFilter = {
    ...(query.state ? { state: query.state } : {}),
    ...(query.network ? { network: query.network } : {}),
    ...(query.model ? { model: query.model } : {}),
    ...(query.payer ? { payer: query.payer } : {}),
    ...range(query),
  };
  return { filter, limit: pageSize(query.limit, DEFAULT_PAGE_SIZE), after: query.cursor === undefined ? undefined : decodeCursor(query.cursor) };
}

export function parseRevenueQuery(url: string): Pick<PaymentFilter, 'from' | 'before'> {
  return range(parseOrThrow(revenueQuery, queryObject(url)));
}

/** ?network=&payer=&limit= of the payment channel listing. */
export function parseChannelsQuery(url: string): { network?: string; payer?: string; limit: number } {
  const query = parseOrThrow(channelsQuery, queryObject(url));
  return { ...(query.network ? { network: query.network } : {}), ...(query.payer ? { payer: query.payer } : {}), limit: pageSize(query.limit, DEFAULT_CHANNELS_PAGE_SIZE) };
}
