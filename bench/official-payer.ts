// A buyer paying one call again and again with the official x402 client (@x402/fetch 2.x with @x402/evm's exact,
// upto or batch-settlement client scheme), on the gateway's sandbox base chain, funded by its faucet. Each call's
// payment is made before its request is timed (signing is the client's cost); the receipt is checked.
import { request, type Agent } from 'node:http';
import { createPublicClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import type { PaymentRequired } from '@x402/core/types';
import { jsonRequest, newAgent, postOnce, sendOnce, type RequestSpec } from './load.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';

const BASE = NETWORKS.base as EvmNetwork;
const NETWORK = { 'X-Network': 'base' };

export type SchemeName = 'exact' | 'upto' | 'vouchers';

export interface Timed {
  status: number;
  /** to the last byte */
  ms: number;
  /** to the first chunk holding `marker` (NaN without one) */
  markerMs: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request, its answer read whole; the time to the first chunk holding `marker` noted on the way. */
export function timedSend(agent: Agent, origin: URL, spec: RequestSpec, marker?: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let markerMs = NaN;
    const req = request({ agent, host: origin.hostname, port: origin.port, method: spec.method, path: spec.path, headers: spec.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (marker !== undefined && Number.isNaN(markerMs) && chunk.includes(marker)) markerMs = performance.now() - started;
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, markerMs, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(spec.body);
  });
}

/** The sandbox base chain's RPC URL, from the gateway's /healthz. */
export async function sandboxRpcUrl(gateway: URL): Promise<string> {
  const health = JSON.parse((await sendOnce(gateway, { method: 'GET', path: '/healthz', headers: {} })).body.toString()) as {
    sandboxNetworks?: Record<string, { rpcUrl?: string }>;
  };
  const url = health.sandboxNetworks?.base?.rpcUrl;
  if (!url) throw new Error('the gateway runs no sandbox base chain');
  return url;
}

/**
 * A funded buyer of `call` under `scheme`, on one kept-alive connection. pay() makes the payment, then times the
 * paid request; a streamed answer carries its receipt in its last event (checked there), any other in
 * PAYMENT-RESPONSE (checked by the client).
 */
export async function officialPayer(gateway: URL, rpcUrl: string, scheme: SchemeName, call: { path: string; body: object }) {
  const account = privateKeyToAccount(generatePrivateKey());
  const funded = await postOnce(gateway, '/sandbox/faucet', { network: 'base', address: account.address, amount: '100000000' });
  if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}`);
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(rpcUrl) }));
  const schemes = {
    exact: () => new ExactEvmScheme(signer),
    upto: () => new UptoEvmScheme(signer, { rpcUrl }),
    vouchers: () => new BatchSettlementEvmScheme(signer, { depositStrategy: () => '5000000' }),
  };
  const client = new x402HTTPClient(new x402Client().register(BASE.caip2 as `${string}:${string}`, schemes[scheme]()));
  const quote = await postOnce(gateway, call.path, call.body, NETWORK);
  const required = JSON.parse(Buffer.from(String(quote.headers['payment-required']), 'base64').toString('utf8')) as PaymentRequired;
  const offered = scheme === 'vouchers' ? 'batch-settlement' : scheme;
  if (!required.accepts.some((offer) => offer.scheme === offered)) throw new Error(`the gateway offers no ${offered} for ${call.path}`);
  required.accepts = required.accepts.filter((offer) => offer.scheme === offered);
  const streamed = (call.body as { stream?: boolean }).stream === true;
  const agent = newAgent(1);
  return {
    agent,
    async pay(): Promise<number> {
      const payload = await client.createPaymentPayload(required);
      const reply = await timedSend(agent, gateway, jsonRequest(call.path, call.body, { ...NETWORK, ...client.encodePaymentSignatureHeader(payload) }));
      if (reply.status !== 200) throw new Error(`${scheme} call answered ${reply.status}: ${reply.body.slice(0, 300)}`);
      if (streamed) {
        if (!reply.body.includes('"success":true')) throw new Error(`${scheme}: the stream ended without a successful receipt`);
      } else {
        const header = (name: string) => [reply.headers[name.toLowerCase()]].flat()[0] ?? null;
        const result = await client.processPaymentResult(payload, header, reply.status);
        if (result.settleResponse?.success !== true) throw new Error(`${scheme}: no successful receipt`);
      }
      return reply.ms;
    },
  };
}
