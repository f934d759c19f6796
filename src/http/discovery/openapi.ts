// The OpenAPI 3.1 document, generated from the same zod schemas that validate requests.
import { z } from 'zod';
import type { Endpoint } from '../../api/endpoint.ts';
import type { PaidOperation } from '../paid/operations.ts';
import { NETWORK_NAMES } from '../../x402/networks.ts';
import { adminOpenApi } from '../admin/admin-openapi.ts';
import { jsonContent, jsonSchema } from './openapi-schema.ts';
import { PAYMENT_STATES } from '../../store/ledger.ts';

const errorSchema = z.object({
  error: z.string().describe('Human-readable reason'),
  code: z.string().describe('Stable machine-readable code'),
  field: z.string().optional().describe('The request field or header at fault'),
});

const paymentRequirementSchema = z.object({
  scheme: z.literal('exact'),
  network: z.enum(NETWORK_NAMES),
  maxAmountRequired: z.string().describe('Integer amount in the asset atomic units (USDC: 6 decimals)'),
  resource: z.url(),
  description: z.string(),
  mimeType: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number().int(),
  asset: z.string(),
  outputSchema: z.object({
    input: z.object({
      type: z.literal('http'),
      method: z.literal('POST'),
      discoverable: z.boolean(),
      bodyType: z.literal('json').optional(),
      bodyFields: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
  extra: z.record(z.string(), z.unknown()).describe('EVM: { name, version } of the token EIP-712 domain; Solana: { feePayer }'),
});

const paymentRequiredSchema = z.object({
  x402Version: z.number().int(),
  error: z.string(),
  accepts: z.array(paymentRequirementSchema),
});

const paymentReceiptSchema = z.object({
  key: z.string().describe('Payment key (EVM: chain, asset, payer, nonce; Solana: hash of the signed message)'),
  state: z.enum(PAYMENT_STATES),
  network: z.enum(NETWORK_NAMES),
  amount: z.string().describe('Integer amount in the asset atomic units'),
  asset: z.string(),
  payTo: z.string(),
  payer: z.string(),
  transaction: z.string().nullable(),
  resource: z.string(),
  error: z.string().nullable(),
  resultAvailable: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  result: z.unknown().optional().describe('The 200 body of the paid call; only for a settled payment, only to its payer'),
});


/** Request-body JSON Schema, also advertised in each 402 requirement's outputSchema.input.bodyFields. */
export function bodyFieldsOf(endpoint: Endpoint): Record<string, unknown> {
  return (jsonSchema(endpoint.requestSchema).properties as Record<string, unknown>) ?? {};
}

const errorResponse = (description: string) => ({ description, content: jsonContent('Error') });

/** How a paid call is paid, both protocol versions and both schemes (the operations' and the document's description). */
export const HOW_TO_PAY =
  'Paid per call through x402: call without a payment to receive the price in a 402, then repeat the call with the signed proof, ' +
  'in X-PAYMENT (x402 version 1) or PAYMENT-SIGNATURE (version 2; the 402 also carries the v2 requirements in PAYMENT-REQUIRED). ' +
  'Schemes: `exact` (the quoted price; EVM: an EIP-3009 USDC authorization, Solana: a signed transfer) on every network, and on EVM networks `upto` ' +
  '(Permit2) for metered chat: signed for the most the call can cost, charged what it used.';

/** The groups of /docs; every operation is in one (an untagged one would land under Swagger UI's "default"). */
export const TAGS = {
  paid: { name: 'Paid generation', description: 'The three paid routes of the service contract' },
  openai: { name: 'OpenAI-compatible', description: 'The same models behind OpenAI-shaped routes, paid the same way' },
  free: { name: 'Catalog, payments and media', description: 'Free: models and prices, payment lookups, the generated files' },
  admin: { name: 'Admin', description: 'Operator routes: a bearer token (adminTokenEnv)' },
} as const;

/** Every operation of `paths` put in the tag `tag`. */
function tagged(paths: Record<string, unknown>, tag: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(Object.entries(operations as Record<string, Record<string, unknown>>).map(([method, operation]) => [method, { ...operation, tags: [tag] }])),
    ]),
  );
}

/**
 * @param paymentInfo x-payment-info per paid path (http/discovery.ts); a path without one is not advertised as
 * payable (its capability has no model in the catalog)
 */
export function openApiDocument(
  operations: readonly PaidOperation[],
  paymentInfo: ReadonlyMap<string, Record<string, unknown>> = new Map(),
): Record<string, unknown> {
  const endpoints = operations.map((operation) => operation.endpoint);
  const schemas: Record<string, unknown> = {
    Error: jsonSchema(errorSchema),
    PaymentRequired: jsonSchema(paymentRequiredSchema),
    PaymentReceipt: jsonSchema(paymentReceiptSchema),
  };
  const paths: Record<string, unknown> = {};
  for (const endpoint of endpoints) {
    const name = endpoint.capability[0]!.toUpperCase() + endpoint.capability.slice(1);
    schemas[`${name}Request`] = jsonSchema(endpoint.requestSchema);
    schemas[`${name}Response`] = jsonSchema(endpoint.responseSchema);
    paths[endpoint.path] = {
      post: {
        operationId: endpoint.capability,
        summary: endpoint.summary,
        tags: [TAGS.paid.name],
        description: `${endpoint.description}. ${HOW_TO_PAY}`,
        ...(paymentInfo.has(endpoint.path) ? { 'x-payment-info': paymentInfo.get(endpoint.path) } : {}),
        parameters: [
          {
            name: 'X-Network',
            in: 'header',
            required: true,
            description: 'Network to pay on. A proof sent without it is taken on the network it names.',
            schema: { type: 'string', enum: [...NETWORK_NAMES] },
          },
          {
            name: 'X-PAYMENT',
            in: 'header',
            required: false,
            description: 'x402 version 1: base64 of the payment payload JSON (x402-fetch 1.x)',
            schema: { type: 'string' },
          },
          {
            name: 'PAYMENT-SIGNATURE',
            in: 'header',
            required: false,
            description: 'x402 version 2: base64 of the payment payload JSON (@x402/fetch 2.x); send one of the two',
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: true, content: jsonContent(`${name}Request`) },
        responses: {
          '200': {
            description: 'Paid and generated. The settlement receipt (base64 JSON) is in X-PAYMENT-RESPONSE (v1) or PAYMENT-RESPONSE (v2).',
            headers: {
              'X-PAYMENT-RESPONSE': { description: 'x402 v1 settlement receipt, base64 JSON', schema: { type: 'string' } },
              'PAYMENT-RESPONSE': { description: 'x402 v2 settlement receipt, base64 JSON', schema: { type: 'string' } },
            },
            content: jsonContent(`${name}Response`),
          },
          '400': errorResponse('Invalid body, unknown model, or unsupported/mismatched network; never charged'),
          '402': {
            description:
              'Payment required, or the proof was rejected (reason in error; payment_attempts_exhausted: its paid work failed maxFailedAttempts times, nothing was charged, sign a new payment). The body is the x402 v1 answer; PAYMENT-REQUIRED carries the v2 one.',
            headers: { 'PAYMENT-REQUIRED': { description: 'x402 v2 payment requirements, base64 JSON', schema: { type: 'string' } } },
            content: jsonContent('PaymentRequired'),
          },
          '409': errorResponse(
            'The proof is being processed, or its settlement is pending: retry with the same proof. payment_attempts_exhausted: settled first, its work failed too often; recorded for a refund (transaction in the body)',
          ),
          '413': errorResponse('Body too large'),
          '415': errorResponse('Content-Type is not application/json'),
          '502': errorResponse('The model failed; never charged'),
          '503': errorResponse('The model or facilitator is unavailable; never charged'),
          '504': errorResponse('The model timed out; never charged'),
        },
      },
    };
  }
  paths['/api/v1/ai/models'] = {
    get: { operationId: 'models', tags: [TAGS.free.name], summary: 'List models with capabilities, limits and prices (free)', responses: { '200': { description: 'The catalog' } } },
  };
  paths['/api/v1/payments/{id}'] = {
    get: {
      operationId: 'payment',
      tags: [TAGS.free.name],
      summary: 'A payment by transaction hash or payment key: public facts, and its result to the payer (free)',
      description:
        'Anyone gets the public facts. The payer gets `result` by signing the text ' +
        '"x402-ai-gateway: show the result of payment <id> to its payer (timestamp <unix seconds>)" with its own key ' +
        '(EVM: EIP-191 personal_sign, 0x-hex; Solana: ed25519, base58) and sending X-Payer-Signature and X-Payer-Timestamp.',
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'X-Payer-Timestamp', in: 'header', required: false, description: 'Unix seconds, within 5 minutes of the server clock', schema: { type: 'string' } },
        { name: 'X-Payer-Signature', in: 'header', required: false, description: "The payer's signature of the receipt challenge", schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'The payment', content: jsonContent('PaymentReceipt') },
        '401': errorResponse('A payer signature was sent and does not verify'),
        '404': errorResponse('No such payment'),
      },
    },
  };
  paths['/media/{id}'] = {
    get: {
      operationId: 'media',
      tags: [TAGS.free.name],
      summary: 'Fetch generated media (supports Range)',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': { description: 'The file' },
        '206': { description: 'A byte range' },
        '304': { description: 'If-None-Match matched (weak comparison, a list, or *): the cached copy is current' },
        '404': errorResponse('Unknown id'),
        '416': errorResponse('No byte of the Range is in the file; Content-Range: bytes */<size>'),
      },
    },
  };
  const admin = adminOpenApi();
  Object.assign(paths, tagged(admin.paths, TAGS.admin.name));
  Object.assign(schemas, admin.schemas);
  return {
    openapi: '3.1.0',
    info: {
      title: 'x402 AI generation gateway',
      version: '1.0',
      description: `Chat, image generation and text-to-speech, paid per request in USDC through x402 (HTTP 402). ${HOW_TO_PAY}`,
    },
    servers: [{ url: '/' }],
    tags: Object.values(TAGS),
    security: [],
    paths,
    components: { schemas, securitySchemes: admin.securitySchemes },
  };
}
