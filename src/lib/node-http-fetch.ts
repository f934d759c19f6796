// The fetch upstream API calls go through: node:http(s) over keep-alive agents. The global fetch (undici)
// spends about 0.15 ms of spec machinery on each call (Request objects, header guards, body mixins), a
// third of what the whole gateway may add to a chat completion (bench/upstream-overhead.ts); node:http does
// the same round trip for a fraction of that.
//
// It covers what provider calls send: a string or byte body, or none, with any headers and an abort signal.
// It behaves as fetch does where callers can tell: gzip/deflate/br bodies are decoded (and asked for), a
// network failure rejects with TypeError('fetch failed', { cause }) and a body cut mid-way errors the
// stream with its ECONNRESET cause (the AI SDK retries both), an aborted call rejects with the signal's
// reason, redirect 'manual' hands back the 3xx and 'error' refuses it. The rest goes to `fallback` (the
// global fetch) untouched: a Request object, a streamed, Blob or FormData body, and a GET or HEAD redirect to
// follow (asked again through it, which follows it). A redirect answering any other method fails rather than
// send the request twice. Unlike the global fetch it ignores NODE_USE_ENV_PROXY: upstreams are reached
// directly.
//
// `send` answers as node:http does, with no web Response built around the answer: the status, the headers and the
// decoded body stream (the OpenAI-compatible chat model reads its answers that way). It goes through undici's own
// request API (its Agent, not its fetch), the client with the least work per call: at one request in flight
// against a local server, ~20 us less than node:http's ClientRequest and Agent. Its failures read as fetch's:
// a network failure is TypeError('fetch failed', { cause }), an abort rejects (or errors the body) with the
// signal's reason, and a body cut mid-way errors with undici's UND_ERR_SOCKET (retried as ECONNRESET is).
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';

/** Statuses whose response has no body, whatever the connection carries. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type Body = string | Uint8Array | undefined;

/** as fetch does: ask for the encodings it decodes */
export const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

function plainBody(body: RequestInit['body']): Body | false {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return false;
}

function requestHeaders(init: RequestInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  headers['accept-encoding'] ??= ACCEPTED_ENCODINGS;
  return headers;
}

function responseHeaders(message: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

/** The body as sent, decoded by its Content-Encoding: gzip, deflate and br bodies through zlib, any other as it is. */
function decodedBody(contentEncoding: string | string[] | undefined, body: Readable): Readable {
  const encoding = (Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding)?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  return decoder ? pipeline(body, decoder, () => undefined) : body;
}

/** The body as fetch would hand it out: decoded, and a stream that ends or errors with the connection. */
function responseBody(message: IncomingMessage): ReadableStream<Uint8Array> {
  const source = decodedBody(message.headers['content-encoding'], message);
  let open = true; // a web stream throws on enqueue or close once it is closed, errored or cancelled
  return new ReadableStream<Uint8Array>({
    start(controller) {
      source.on('data', (chunk: Buffer) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) source.pause();
      });
      source.once('end', () => {
        if (open) controller.close();
        open = false;
      });
      source.on('error', (error) => {
        if (open) controller.error(error);
        open = false;
      });
    },
    pull() {
      source.resume();
    },
    cancel() {
      open = false;
      source.destroy();
    },
  });
}

/** An answer as node:http gives it: the status, the headers, and the body decoded (a node stream). */
export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

export interface HttpCall {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * One request over undici's pool, answered without a web Response around it (for callers that read node streams):
 * any status comes back as it is (a redirect is not followed), failures and aborts reject as fetch's do.
 */
export type HttpSend = (url: URL, call: HttpCall) => Promise<HttpAnswer>;

export interface NodeHttpClient {
  fetch: typeof fetch;
  send: HttpSend;
}

export interface NodeHttpFetchOptions {
  /** what takes the calls this fetch does not cover; default the global fetch */
  fallback?: typeof fetch;
  /**
   * How long a pooled connection may sit unused before it is closed (undici's default too): a server that
   * drops idle connections without saying when would otherwise get the next request on a dying socket.
   * A call in progress is never cut by it.
   */
  idleTimeoutMs?: number;
  /** how host names are resolved for new connections (public-address.ts pins downloads to checked addresses) */
  lookup?: LookupFunction;
}

export function createNodeHttpFetch(options: NodeHttpFetchOptions = {}): typeof fetch {
  return createNodeHttpClient(options).fetch;
}

/** A pool of kept-alive connections, used as fetch (`fetch`) or as node:http (`send`). */
export function createNodeHttpClient({ fallback = globalThis.fetch, idleTimeoutMs = 4_000, lookup }: NodeHttpFetchOptions = {}): NodeHttpClient {
  const agentOptions = { keepAlive: true, scheduling: 'lifo', timeout: idleTimeoutMs, ...(lookup ? { lookup } : {}) } as const;
  const agents = { 'http:': new HttpAgent(agentOptions), 'https:': new HttpsAgent(agentOptions) };

  /** The answer's head, or the failure: a network error as fetch's TypeError, an abort with its reason. */
  const exchange = (url: URL, agent: HttpAgent, method: string, headers: Record<string, string>, body: Body, signal: AbortSignal | undefined) => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, agent });
      let answered: IncomingMessage | undefined;
      const onAbort = () => {
        // before the answer the call rejects with the reason; after it, the body stream errors with it
        if (answered) answered.destroy(signal?.reason);
        else reject(signal?.reason);
        request.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      request.on('error', (error) => {
        done();
        reject(new TypeError('fetch failed', { cause: error })); // no-op once answered or aborted
      });
      request.once('response', (message) => {
        answered = message;
        message.once('close', done);
        resolve(message);
      });
      request.end(body);
    });
  };

  const fetch: typeof globalThis.fetch = async (input, init) => {
    const body = plainBody(init?.body);
    if (input instanceof Request || body === false) return fallback(input, init);
    const url = input instanceof URL ? input : new URL(input);
    const agent = url.protocol === 'http:' || url.protocol === 'https:' ? agents[url.protocol] : undefined;
    if (!agent) return fallback(input, init);
    const method = init?.method?.toUpperCase() ?? 'GET';
    const message = await exchange(url, agent, method, requestHeaders(init), body, init?.signal ?? undefined);
    const status = message.statusCode ?? 0;
    const headers = responseHeaders(message);
    const refuse = (why: string) => {
      message.destroy();
      throw new TypeError('fetch failed', { cause: new Error(why) });
    };
    // a Response holds statuses 200-599 only (fetch refuses a 1xx as well): anything else is no answer
    if (status < 200 || status > 599) return refuse(`upstream answered HTTP status ${status}`);
    if (REDIRECT_STATUSES.has(status) && headers.has('location') && init?.redirect !== 'manual') {
      // 'follow': a GET or HEAD is asked again through the fallback, which follows it; any other method
      // would reach the first address twice, so it fails as 'error' does
      if (init?.redirect === 'error' || (method !== 'GET' && method !== 'HEAD')) {
        return refuse(`upstream answered a redirect to ${headers.get('location')}; configure the address it points to`);
      }
      message.resume();
      return fallback(input, init);
    }
    const empty = method === 'HEAD' || NULL_BODY_STATUSES.has(status);
    if (empty) message.resume();
    const response = new Response(empty ? null : responseBody(message), { status, statusText: message.statusMessage ?? '', headers });
    Object.defineProperty(response, 'url', { value: url.href });
    return response;
  };

  // undici, loaded at the first send: a service that calls no OpenAI-compatible upstream never loads it
  let dispatcher: Dispatcher | undefined;
  const loadDispatcher = async () => {
    const { Agent } = await import('undici');
    // no limits of undici's own on waiting for the head or the next body bytes (300 s each by default): the
    // caller's signal carries the call's time limit (the provider's timeoutMs), as with node:http
    return (dispatcher ??= new Agent({ keepAliveTimeout: idleTimeoutMs, headersTimeout: 0, bodyTimeout: 0, ...(lookup ? { connect: { lookup } } : {}) }));
  };
  const send: HttpSend = async (url, call) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${url.protocol}`);
    const pool = dispatcher ?? (await loadDispatcher());
    let answer: Dispatcher.ResponseData;
    try {
      answer = await pool.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: call.method as Dispatcher.HttpMethod,
        headers: { 'accept-encoding': ACCEPTED_ENCODINGS, ...call.headers },
        body: call.body ?? null,
        signal: call.signal ?? null,
      });
    } catch (error) {
      // an abort rejects with its reason, as fetch's does; anything else is a network failure
      if (call.signal?.aborted) throw call.signal.reason;
      throw new TypeError('fetch failed', { cause: error });
    }
    return { status: answer.statusCode, headers: answer.headers as IncomingHttpHeaders, body: decodedBody(answer.headers['content-encoding'], answer.body) };
  };

  return { fetch, send };
}
