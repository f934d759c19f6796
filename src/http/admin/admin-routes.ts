// The operator API, behind the admin token (admin-auth.ts):
//   GET /api/v1/admin/payments   payments newest first, filtered and paged (every ledger fact but the stored result
//                                body and the raw X-PAYMENT payload)
//   GET /api/v1/admin/revenue    revenue per UTC day, network and model (settled payments and channel charges);
//                                amounts exact decimal strings
//   GET /api/v1/admin/channels   payment channels newest first (?network=, ?payer=, ?limit=): deposited, charged,
//                                claimed, settled, refunded
import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../../config/load.ts';
import type { Ledger, PaymentSummary, RevenueRow } from '../../store/ledger.ts';
import { adminToken, requireAdminToken } from './admin-auth.ts';
import { encodeCursor, parseChannelsQuery, parsePaymentsQuery, parseRevenueQuery } from './admin-query.ts';
import { publicChannel } from '../paid/channel-views.ts';

export const ADMIN_PREFIX = '/api/v1/admin';

/** A listed payment: the summary as stored, its transaction under the name the public receipt uses. */
export function adminPayment(payment: PaymentSummary): Record<string, unknown> {
  const { txHash, ...rest } = payment;
  return { ...rest, transaction: txHash };
}

/** Per network: count and exact amount over every row (networks may settle different assets, so never summed across). */
export function revenueTotals(rows: RevenueRow[]): { network: string; count: number; amount: string }[] {
  const totals = new Map<string, { count: number; amount: bigint }>();
  for (const row of rows) {
    const total = totals.get(row.network) ?? { count: 0, amount: 0n };
    total.count += row.count;
    total.amount += BigInt(row.amount);
    totals.set(row.network, total);
  }
  return [...totals]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([network, total]) => ({ network, count: total.count, amount: total.amount.toString() }));
}

export function adminRoutes(ledger: Ledger, config: Pick<Config, 'adminTokenEnv'>, log: Pick<Logger, 'info'>): Hono {
  const token = adminToken(config);
  log.info(
    { adminApi: token ? 'enabled' : 'disabled' },
    token ? 'admin API enabled' : `admin API disabled: set ${config.adminTokenEnv} (or ${config.adminTokenEnv}_FILE) to enable it`,
  );
  const app = new Hono();
  app.use(`${ADMIN_PREFIX}/*`, requireAdminToken(token));
  app.get(`${ADMIN_PREFIX}/payments`, async (c) => {
    const { filter, limit, after } = parsePaymentsQuery(c.req.url);
    const page = await ledger.listPayments(filter, limit, after);
    return c.json({ payments: page.payments.map(adminPayment), limit, nextCursor: page.next && encodeCursor(page.next) });
  });
  // payment channels (x402 batch-settlement): deposited, charged, claimed, settled, refunded per channel
  app.get(`${ADMIN_PREFIX}/channels`, async (c) => {
    const query = parseChannelsQuery(c.req.url);
    const channels = ledger.channels ? await ledger.channels.list(query) : [];
    return c.json({ channels: channels.map(publicChannel), limit: query.limit });
  });
  app.get(`${ADMIN_PREFIX}/revenue`, async (c) => {
    const range = parseRevenueQuery(c.req.url);
    const rows = await ledger.revenue(range);
    return c.json({
      from: range.from?.toISOString() ?? null,
      before: range.before?.toISOString() ?? null,
      rows,
      totals: revenueTotals(rows),
    });
  });
  return app;
}
