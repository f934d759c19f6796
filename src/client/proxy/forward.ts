// The hop to the gateway: the client's request as the gateway should see it (its API key and any payment header of
// its own dropped, the network named, the proxy's payment added), over kept-alive connections; and the gateway's
// answer back to the client as it arrives, paused while the client is slow to read (backpressure) and cut when the
// client leaves (so the gateway stops the work and charges nothing for it).
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Headers never passed on: hop-by-hop ones, the client's credentials, payment headers the proxy owns. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  // the agent's API key is for the proxy (which takes any): it never leaves this machine (and see CREDENTIAL below)
  'authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'openai-organization',
  'openai-project',
  // the proxy pays: a client's own payment headers would be spent by nobody's consent
  'payment-signature',
  'x-payment',
  'sign-in-with-x',
  'x-network',
  // the answer is read on its way (receipts in a stream's last event): uncompressed
  'accept-encoding',
]);

/** any other header that looks like it carries a credential (x-goog-api-key, anthropic-api-key, x-auth-token, ...) */
const CREDENTIAL = /api[-_]?key|auth|token|secret|password|credential|session|cookie/i;

/** hop-by-hop ones, and the gateway's CORS headers: the proxy serves no web page (local-only.ts) */
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'trailer']);
const isDroppedResponseHeader = (name: string) => DROPPED_RESPONSE_HEADERS.has(name) || name.startsWith('access-control-');

export interface Gateway {
  /** the gateway's URL without a trailing slash (a path prefix is kept) */
  url: URL;
  /** sends a request; the answer's body is left unread for the caller */
  send(method: string, path: string, headers: OutgoingHttpHeaders, body: Buffer | undefined, signal?: AbortSignal): Promise<IncomingMessage>;
  close(): void;
}

export function gatewayAt(base: string): Gateway {
  const url = new URL(base.replace(/\/+$/, ''));
  const https = url.protocol === 'https:';
  const agent = new (https ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, keepAliveMsecs: 1000 });
  const request = https ? httpsRequest : httpRequest;
  const prefix = url.pathname === '/' ? '' : url.pathname;
  return {
    url,
    send(method, path, headers, body, signal) {
      return new Promise((resolve, reject) => {
        const outgoing = request(
          { agent, protocol: url.protocol, hostname: url.hostname, port: url.port, method, path: `${prefix}${path}`, headers, ...(signal ? { signal } : {}) },
          resolve,
        );
        outgoing.on('error', reject);
        outgoing.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** The client's headers as the gateway gets them, with the network and `extra` (the payment) added. */
export function forwardedHeaders(incoming: IncomingHttpHeaders, network: string, body: Buffer | undefined, extra: Record<string, string> = {}): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !DROPPED_REQUEST_HEADERS.has(name) && !CREDENTIAL.test(name)) headers[name] = value;
  }
  headers['x-network'] = network;
  if (body !== undefined) headers['content-length'] = String(body.length);
  return Object.assign(headers, extra);
}

/** Reads a request body whole (it is sent again after the 402), up to `limit` bytes; undefined past it. */
export function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(incoming.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.resolve(undefined);
  // stream events, not `for await`: the async iterator costs a promise and a tick per chunk on every call
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        incoming.off('data', onData);
        incoming.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    incoming.on('data', onData);
    // past the limit the promise is settled already: this resolve is then a no-op
    incoming.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    incoming.once('error', reject);
    incoming.once('close', () => {
      if (!incoming.complete) reject(new Error('the client left before its request was whole'));
    });
  });
}

/** Reads an answer whole (a 402, a small error): for the proxy's own use, never relayed. */
export async function readAll(answer: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Relays the gateway's answer to the client as it arrives, showing each chunk to `look` first. Resolves true when
 * the answer ended whole, false when either side broke off (the gateway is then told, by the socket closing).
 */
export function relay(answer: IncomingMessage, client: ServerResponse, look?: (chunk: Buffer) => void): Promise<boolean> {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined && !isDroppedResponseHeader(name)) headers[name] = value;
  }
  client.writeHead(answer.statusCode ?? 502, headers);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (whole: boolean) => {
      if (settled) return;
      settled = true;
      resolve(whole);
    };
    answer.on('data', (chunk: Buffer) => {
      look?.(chunk);
      if (!client.write(chunk)) {
        answer.pause();
        client.once('drain', () => answer.resume());
      }
    });
    answer.on('end', () => {
      client.end();
      finish(true);
    });
    answer.on('error', () => {
      client.destroy();
      finish(false);
    });
    answer.on('aborted', () => {
      client.destroy();
      finish(false);
    });
    client.on('close', () => {
      if (!answer.complete) {
        answer.destroy();
        finish(false);
      }
    });
  });
}
