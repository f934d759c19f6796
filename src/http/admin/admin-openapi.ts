// The operator API in the OpenAPI document (merged by openapi.ts): paths, schemas and the bearer scheme.
import { z } from 'zod';
import { PAYMENT_STATES } from '../../store/ledger.ts';
import { NETWORK_NAMES } from '../../x402/networks.ts';
import { ADMIN_PREFIX } from './admin-routes.ts';
import { jsonContent, jsonSchema } from '../discovery/openapi-schema.ts';
import { DEFAULT_CHANNELS_PAGE_SIZE, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './admin-query.ts';

const atomic = z.string().describe('Decimal integer string in the asset atomic units (USDC: 6 decimals), exact');

const adminPaymentSchema = z.object({
  key: z.string().describe('Payment key (EVM: chain, asset, payer, nonce; Solana: hash of the signed message)'),
  state: z.enum(PAYMENT_STATES),
  network: z.string(),
  model: z.string().describe('Model id of the request ("" for payments recorded before models were)'),
  amount: atomic,
  asset: z.string(),
  payTo: z.string(),
  payer: z.string(),
  transaction: z.string().nullable(),
  resource: z.string(),
  requestHash: z.string(),
  error: z.string().nullable(),
  requirements: z.record(z.string(), z.unknown()).describe('The payment requirement the proof paid'),
  resultAvailable: z.boolean(),
  leaseUntil: z.string().nullable(),
  failedAttempts: z.number().int().describe('Times the paid work of this payment failed (see maxFailedAttempts); error payment_attempts_exhausted on a settled payment without a result: owed a refund'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const paymentsPageSchema = z.object({
  payments: z.array(adminPaymentSchema),
  limit: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
});

const revenueSchema = z.object({
  from: z.string().nullable(),
  before: z.string().nullable().describe('Exclusive end of the range'),
  rows: z.array(
    z.object({ day: z.string().describe('UTC day, YYYY-MM-DD'), network: z.string(), model: z.string(), count: z.number().int(), amount: atomic }),
  ),
  totals: z.array(z.object({ network: z.string(), count: z.number().int(), amount: atomic })),
});

const channelSchema = z.object({
  channelId: z.string(),
  scheme: z.literal('batch-settlement'),
  network: z.string(),
  payer: z.string(),
  payTo: z.string(),
  asset: z.string(),
  withdrawDelay: z.number().int(),
  deposited: atomic.describe('Deposits this server submitted'),
  charged: atomic.describe('What this server charged, cumulative'),
  claimed: atomic,
  settled: atomic,
  refunded: atomic,
  balance: atomic,
  withdrawRequestedAt: z.number().int().describe('When the payer asked to withdraw (chain time); 0 when it has not'),
  lastClaimTransaction: z.string().nullable(),
  lastRefundTransaction: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const channelsSchema = z.object({ channels: z.array(channelSchema), limit: z.number().int() });

const query = (name: string, description: string, extra: Record<string, unknown> = {}) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string', ...extra },
});
const dateRange = [
  query('from', 'Created at or after: a UTC date (YYYY-MM-DD) or an ISO 8601 date-time'),
  query('to', 'Created before: a date-time (exclusive), or a UTC date (that whole day included)'),
];
const errors = {
  '400': { description: 'An unknown, repeated or invalid query parameter', content: jsonContent('Error') },
  '401': { description: 'Missing or wrong bearer token (WWW-Authenticate: Bearer)', content: jsonContent('Error') },
  '403': { description: 'admin_disabled: no admin token is configured on this instance', content: jsonContent('Error') },
};

export function adminOpenApi(): { paths: Record<string, unknown>; schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } {
  const security = [{ adminToken: [] }];
  return {
    securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (env ADMIN_TOKEN or the variable adminTokenEnv names)' } },
    schemas: {
      AdminPaymentsPage: jsonSchema(paymentsPageSchema, 'output'),
      AdminRevenue: jsonSchema(revenueSchema, 'output'),
      AdminChannels: jsonSchema(channelsSchema, 'output'),
    },
    paths: {
      [`${ADMIN_PREFIX}/payments`]: {
        get: {
          operationId: 'adminPayments',
          summary: 'Operator: list payments, newest first',
          description: 'Every ledger fact of each payment except the stored result body and the raw X-PAYMENT payload.',
          security,
          parameters: [
            query('state', 'Payment state', { enum: [...PAYMENT_STATES] }),
            query('network', 'Network', { enum: [...NETWORK_NAMES] }),
            query('model', 'Model id'),
            query('payer', 'Payer address (EVM addresses in any letter case)'),
            ...dateRange,
            query('limit', `Page size, default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE} (larger values are capped)`),
            query('cursor', 'nextCursor of the previous page'),
          ],
          responses: { '200': { description: 'One page', content: jsonContent('AdminPaymentsPage') }, ...errors },
        },
      },
      [`${ADMIN_PREFIX}/revenue`]: {
        get: {
          operationId: 'adminRevenue',
          summary: 'Operator: revenue per UTC day, network and model',
          description:
            'Counts and exact sums (decimal strings, atomic units) of settled payments and of the calls paid on payment channels (their charges, claimed on chain by the claimer), with totals per network.',
          security,
          parameters: dateRange,
          responses: { '200': { description: 'The summary', content: jsonContent('AdminRevenue') }, ...errors },
        },
      },
      [`${ADMIN_PREFIX}/channels`]: {
        get: {
          operationId: 'adminChannels',
          summary: 'Operator: payment channels (batch-settlement), newest first',
          description: 'Deposited, charged, claimed, settled and refunded per channel, exact (decimal strings, atomic units).',
          security,
          parameters: [
            query('network', 'Network', { enum: [...NETWORK_NAMES] }),
            query('payer', 'Payer address (0x and 40 hex digits)'),
            query('limit', `Page size, default ${DEFAULT_CHANNELS_PAGE_SIZE}, at most ${MAX_PAGE_SIZE} (larger values are capped)`),
          ],
          responses: { '200': { description: 'The channels', content: jsonContent('AdminChannels') }, ...errors },
        },
      },
    },
  };
}
