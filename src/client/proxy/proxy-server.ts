// `x402-ai proxy`: a server on 127.0.0.1 that any OpenAI or Anthropic client can use as its base URL. It takes any
// API key (and passes none on), asks the gateway the price of each paid call (or knows it: quote-cache.ts), pays
// it within the caps (payer.ts), relays the answer as it streams, and counts what the receipt says was charged.
// Free routes (the model list, token counting) pass straight through. GET /stats is the account.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeHeader, encodeHeader } from '../../x402/encoding.ts';
import type { PaymentRequired } from '@x402/core/types';
import { accountOf, type Account } from './account.ts';
import { CapExceeded, type Budget } from './budget.ts';
import { capMessage } from './caps.ts';
import { dialectOf, proxyErrorBody, type ProxyErrorCode } from './client-errors.ts';
import { forwardedHeaders, readAll, readBody, relay, type Gateway } from './forward.ts';
import { foreignRequest } from './local-only.ts';
import { PayeeRefused } from './payment-policy.ts';
import { MAX_PAYMENTS_PER_CALL, PENDING_RETRIES, type Attempt, type Payer } from './payer.ts';
import { QuoteCache } from './quote-cache.ts';
import { AnswerTail, StreamTap, type Receipt } from './receipts.ts';
import { failureReason } from '../reach.ts';
import { fallbackFor, SUBSTITUTED_HEADER, requestModel, withGatewayModel, type ChatModels } from './chat-models.ts';

/** the surfaces the gateway sells, each paid per call */
const PAID_ROUTES = new Set(['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/images/generations', '/v1/audio/speech']);
/** free routes passed through as they are: the models (and one model, its id without dot segments), token counting */
const isFree = (method: string | undefined, path: string) =>
  ((method === 'GET' || method === 'HEAD') && (path === '/v1/models' || (path.startsWith('/v1/models/') && !hasDotSegment(path)))) ||
  (method === 'POST' && path === '/v1/messages/count_tokens');

/** `.` or `..` as a segment, spelled out or percent-encoded: /v1/models/../../healthz must not reach /healthz */
function hasDotSegment(path: string): boolean {
  return path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}


/** One paid call as the account line shows it. */
export interface PaidCallFacts {
  surface: string;
  model?: string;
  promptTokens?: number;
  completionTokens?: number;
  charged: bigint;
  scheme: string;
  /** everything spent so far */
  total: bigint;
}

export interface ProxyServerOptions {
  gateway: Gateway;
  network: string;
  payer: Payer;
  budget: Budget;
  /** 0: any free port */
  port: number;
  /** the gateway's models, and the chat model a request naming another is sent with (chat-models.ts) */
  models?: ChatModels | undefined;
  /** the largest request body taken (a coding agent's long session is a few MB) */
  bodyLimitBytes?: number;
  onPaidCall?: (call: PaidCallFacts) => void;
  /** told of every request once answered: method, path, status, milliseconds (--verbose); never a body or a key */
  onRequest?: (line: string) => void;
  /** extra facts for /stats (the payer's address, the gateway) */
  describe?: () => Record<string, unknown>;
}

export interface ProxyServer {
  url: string;
  port: number;
  /** calls being answered now */
  readonly inFlight: number;
  account(): Account;
  /** stops taking calls and waits for those in flight */
  close(): Promise<void>;
}

export async function startProxyServer(options: ProxyServerOptions): Promise<ProxyServer> {
  const quotes = new QuoteCache();
  const bodyLimit = options.bodyLimitBytes ?? 32 * 1024 * 1024;
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const account = () => accountOf(options.budget.refresh(), options.budget.caps, options.budget.now());

  const server: Server = createServer((req, res) => {
    inFlight++;
    if (options.onRequest) {
      const started = performance.now();
      res.once('close', () => options.onRequest!(`${req.method} ${req.url} -> ${res.statusCode}${res.writableFinished ? '' : ' (cut)'} ${(performance.now() - started).toFixed(0)} ms`));
    }
    handle(req, res)
      .catch((error: unknown) => {
        if (!res.headersSent) answer(res, dialectOf(req.url ?? '/'), 502, 'payment_failed', `x402-ai proxy: ${(error as Error).message}`);
        else res.destroy();
      })
      .finally(() => {
        inFlight--;
        if (inFlight === 0) idle?.();
      });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const path = canonicalPath(query === -1 ? target : target.slice(0, query));
    const forwardPath = query === -1 ? path : `${path}${target.slice(query)}`;
    const dialect = dialectOf(path);
    const foreign = foreignRequest(req.headers);
    if (foreign) return answer(res, dialect, 403, 'forbidden', `x402-ai proxy: ${foreign}; it serves programs on this machine only`);
    if (req.method === 'GET' && path === '/stats') return json(res, 200, { ...options.describe?.(), ...account() });
    // Claude Code's connection check (a HEAD it sends at start): this proxy is up
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/api/hello') return json(res, 200, { message: 'hello' });
    const paid = req.method === 'POST' && PAID_ROUTES.has(path);
    if (!paid && !isFree(req.method, path)) {
      return answer(res, dialect, 404, 'not_found', `x402-ai proxy: no route ${req.method} ${path}; it serves ${[...PAID_ROUTES].join(', ')}, GET /v1/models, POST /v1/messages/count_tokens and GET /stats`);
    }
    const read = req.method === 'POST' ? await readBody(req, bodyLimit) : undefined;
    if (req.method === 'POST' && read === undefined) {
      return answer(res, dialect, 413, 'payload_too_large', `x402-ai proxy: the request body is over ${bodyLimit} bytes`);
    }
    let body = read;
    const fallback = options.models && fallbackFor(options.models, path);
    if (read !== undefined && options.models && fallback) {
      const sent = withGatewayModel(read, options.models, fallback);
      body = sent.body;
      if (sent.substituted) res.setHeader(SUBSTITUTED_HEADER, sent.substituted);
    }
    // a client that leaves before its answer is complete: the gateway's request is cut too (it stops the work)
    const client = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) client.abort();
    });
    const send = (extra?: Record<string, string>) =>
      options.gateway.send(req.method!, forwardPath, forwardedHeaders(req.headers, options.network, body, extra), body, client.signal).catch((error: unknown) => {
        throw new Unreachable(`cannot reach the gateway at ${options.gateway.url.href}: ${failureReason(error)}`);
      });
    try {
      if (!paid) {
        await relay(await send(), res);
        return;
      }
      await payCall(path, body!, send, res, client.signal);
    } catch (error) {
      if (error instanceof Unreachable && !res.headersSent) return answer(res, dialect, 502, 'gateway_unreachable', `x402-ai proxy: ${error.message}`);
      throw error;
    }
  }

  async function payCall(path: string, body: Buffer, send: (extra?: Record<string, string>) => Promise<IncomingMessage>, res: ServerResponse, client: AbortSignal): Promise<void> {
    const dialect = dialectOf(path);
    const key = QuoteCache.key(path, options.network, body);
    let required = quotes.get(key, Date.now());
    let fromCache = required !== undefined;
    if (!required) {
      const probe = await send();
      if (probe.statusCode !== 402) {
        // not a price: the gateway's own answer (a bad request, a model it does not have), relayed as it is
        await relay(probe, res);
        return;
      }
      required = requiredFromHeaders(probe.headers);
      await readAll(probe);
      if (!required) return answer(res, dialect, 502, 'payment_failed', 'x402-ai proxy: the gateway answered 402 without a PAYMENT-REQUIRED header (x402 v2)');
      quotes.set(key, required, Date.now());
    }

    for (let payments = 0; payments < MAX_PAYMENTS_PER_CALL; payments++) {
      // a client that left (an agent cancelling, a queued call given up) is not paid for
      if (client.aborted) return;
      let attempt: Attempt;
      try {
        attempt = await options.payer.pay(required, path);
      } catch (error) {
        if (error instanceof CapExceeded) return answer(res, dialect, 402, 'spending_cap_reached', capMessage(error.refusal, options.budget.now()));
        if (error instanceof PayeeRefused) return answer(res, dialect, 402, 'payee_refused', `x402-ai proxy: ${error.message}`);
        throw error;
      }
      // the same base64 of the same JSON as the official encodePaymentSignatureHeader, ~10x cheaper (Buffer, not btoa)
      const header = { 'payment-signature': encodeHeader(attempt.payload) };
      if (client.aborted) {
        // it left while this was signed: the payment never leaves this machine
        await attempt.failed(true);
        return;
      }
      let reply: IncomingMessage;
      try {
        reply = await sendSettling(send, header);
      } catch (error) {
        await attempt.failed(false);
        throw error;
      }
      if (reply.statusCode === 402) {
        const again = requiredFromHeaders(reply.headers);
        await readAll(reply);
        // a channel resynchronised by the corrective 402, or a price that changed since it was kept: pay anew
        const retry = (await attempt.refused(again)) || (fromCache && again !== undefined);
        if (retry && again) {
          required = again;
          fromCache = false;
          quotes.set(key, again, Date.now());
          continue;
        }
        return answer(res, dialect, 402, 'payment_refused', `x402-ai proxy: the gateway refused the payment (${again?.error ?? 'no reason given'}); nothing was charged`);
      }
      await deliver(attempt, reply, path, body, res);
      return;
    }
    return answer(res, dialect, 402, 'payment_refused', `x402-ai proxy: the gateway kept refusing the payment (last: ${required.error ?? 'no reason given'}); nothing was charged`);
  }

  /** Sends the paid request; a settlement still pending (409) is asked about again with the same payment. */
  async function sendSettling(send: (extra?: Record<string, string>) => Promise<IncomingMessage>, header: Record<string, string>): Promise<IncomingMessage> {
    for (let attempt = 0; ; attempt++) {
      const reply = await send(header);
      if (reply.statusCode !== 409 || attempt >= PENDING_RETRIES) return reply;
      await readAll(reply);
      await sleep(Math.min(Number(reply.headers['retry-after'] ?? 1) || 1, 10) * 1000);
    }
  }

  /** Relays a paid answer and counts its charge: the receipt in its header, or in a stream's last event. */
  async function deliver(attempt: Attempt, reply: IncomingMessage, path: string, body: Buffer, res: ServerResponse): Promise<void> {
    const ok = (reply.statusCode ?? 500) < 300;
    const streamed = String(reply.headers['content-type'] ?? '').startsWith('text/event-stream');
    const tap = ok && streamed ? new StreamTap() : undefined;
    const tail = new AnswerTail();
    const whole = await relay(reply, res, (chunk) => {
      tap?.push(chunk);
      tail.push(chunk);
    });
    tap?.end();
    const headerReceipt = receiptOf(reply.headers);
    const receipt: Receipt | undefined = tap?.receipt ?? (headerReceipt?.success ? headerReceipt : undefined);
    if (!ok || !receipt?.success) {
      // released only when the gateway's whole answer (its error, a stream's failure event) says nothing was charged;
      // work that failed after a settled payment, or an answer some hop cut or stripped, keeps the hold counted
      await attempt.failed(whole && tail.saysNothingCharged());
      return;
    }
    const usage = tap?.usage ?? usageHeaders(reply.headers);
    const model = tap?.model ?? requestModel(body);
    const charged = await attempt.delivered(receipt, { ...usage, ...(model ? { model } : {}) });
    options.onPaidCall?.({ surface: path, model, ...usage, charged, scheme: attempt.scheme, total: options.budget.state.total });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get inFlight() {
      return inFlight;
    },
    account,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}

class Unreachable extends Error {}

/**
 * `/chat/completions` and `/v1/chat/completions` alike: some clients are configured without the /v1; and a doubled
 * or trailing slash (a base URL ending in "/" joined by hand) is read as one.
 */
function canonicalPath(given: string): string {
  const path = given.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
  if (path.startsWith('/v1/') || path === '/stats') return path;
  const prefixed = `/v1${path}`;
  return PAID_ROUTES.has(prefixed) || isFree('GET', prefixed) || isFree('POST', prefixed) ? prefixed : path;
}

function header(headers: IncomingMessage['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

// the gateway's own headers, read with the Buffer decoder (the official decoders go through atob, several times slower)
function requiredFromHeaders(headers: IncomingMessage['headers']): PaymentRequired | undefined {
  const value = header(headers, 'payment-required');
  const required = value === undefined ? undefined : decodeHeader(value);
  return isObject(required) && Array.isArray(required.accepts) ? (required as unknown as PaymentRequired) : undefined;
}

function receiptOf(headers: IncomingMessage['headers']): Receipt | undefined {
  const value = header(headers, 'payment-response');
  const receipt = value === undefined ? undefined : decodeHeader(value);
  return isObject(receipt) && typeof receipt.success === 'boolean' ? (receipt as unknown as Receipt) : undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function usageHeaders(headers: IncomingMessage['headers']): { promptTokens?: number; completionTokens?: number } {
  const count = (name: string) => {
    const value = Number(header(headers, name));
    return Number.isFinite(value) && header(headers, name) !== undefined ? value : undefined;
  };
  const promptTokens = count('x-usage-prompt-tokens');
  const completionTokens = count('x-usage-completion-tokens');
  return { ...(promptTokens === undefined ? {} : { promptTokens }), ...(completionTokens === undefined ? {} : { completionTokens }) };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value, null, 2);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function answer(res: ServerResponse, dialect: ReturnType<typeof dialectOf>, status: number, code: ProxyErrorCode, message: string): void {
  json(res, status, proxyErrorBody(dialect, status, code, message));
}
