// The HTTP side of the Solana sandbox's JSON-RPC 2.0 endpoint: node:http bound where `listen` says
// (sandbox/listen.ts), bodies parsed, batches answered in order, u64 values written as validators write them.
// It loads nothing of Solana: what each request gets is `answer`'s (rpc-server.ts), so the service can listen
// at startup and load the chain's runtime at its first request (sandbox.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bindHost, localRpcUrl, publicRpcUrl, type ChainListen } from '../listen.ts';

export interface JsonRpcRequest {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/** The whole reply to one request object: a result or an error, with its id. */
export type JsonRpcAnswer = (request: JsonRpcRequest) => Promise<unknown>;

export interface JsonRpcListener {
  /** where this process reaches it */
  url: string;
  /** where a buyer reaches it (listen.publicHost), else url */
  publicUrl: string;
  close(): Promise<void>;
}

/**
 * The largest request body read (as a validator's RPC has one): a Solana transaction is at most 1,232 bytes, and a
 * batch of reads far below this. Larger ones get a 413 and the rest is read and dropped: no client can make the
 * service hold a body.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/** JSON with u64 values written as plain numbers, as validators do (kit parses them as bigints). */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `__u64__${v}` : v)).replace(
    /"__u64__(\d+)"/g,
    '$1',
  );
}

/** The reply to a request whose answer failed unexpectedly (JSON-RPC's -32603). */
export function internalError(id: unknown, error: unknown): unknown {
  return { jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${error instanceof Error ? error.message : String(error)}` } };
}

/** An answer that could not be given (the runtime failed to load) is an internal error, never a dropped request. */
async function answerOrError(answer: JsonRpcAnswer, request: JsonRpcRequest): Promise<unknown> {
  try {
    return await answer(request);
  } catch (error) {
    return internalError(request.id ?? null, error);
  }
}

export async function listenJsonRpc(listen: ChainListen, answer: JsonRpcAnswer): Promise<JsonRpcListener> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const tooLarge = () => {
      res.writeHead(413, { 'content-type': 'application/json' });
      res.end(stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid request: the body is over ${MAX_BODY_BYTES} bytes` } }));
    };
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge();
    req.on('data', (chunk: Buffer) => {
      if (size > MAX_BODY_BYTES) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge();
      else chunks.push(chunk);
    });
    req.on('end', async () => {
      if (size > MAX_BODY_BYTES) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const reply =
        body === undefined
          ? { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }
          : Array.isArray(body)
            ? await Promise.all(body.map((r) => answerOrError(answer, r as JsonRpcRequest)))
            : await answerOrError(answer, body as JsonRpcRequest);
      res.writeHead(200, { 'content-type': 'application/json' }).end(stringify(reply));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, bindHost(listen), resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: localRpcUrl(listen, port),
    publicUrl: publicRpcUrl(listen, port),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
