// A small JSON-RPC proxy in front of a sandbox anvil, to cut the gateway's RPC and restore it: the gateway's
// configured rpcUrl is the proxy's, and the test decides what gets through.
//   - cutBroadcasts = true: every eth_sendRawTransaction is never forwarded, its connection destroyed (the
//     network failing while a settlement is being broadcast, the client's own retries included), while the
//     other calls still get through; broadcastCut resolves at the first one cut;
//   - down = true: every request's connection is destroyed unanswered (an outage) until down = false.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcProxy {
  url: string;
  /** while true, nothing gets through */
  down: boolean;
  /** while true, no broadcast (eth_sendRawTransaction) gets through */
  cutBroadcasts: boolean;
  /** resolves with the raw transaction of the first broadcast cut */
  readonly broadcastCut: Promise<string>;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  let firstCut!: (raw: string) => void;
  const broadcastCut = new Promise<string>((resolve) => (firstCut = resolve));
  const state = { down: false, cutBroadcasts: false };
  const server: Server = createServer(async (request, response) => {
    const body = await readBody(request).catch(() => undefined);
    if (body === undefined || state.down) return void request.socket.destroy();
    if (state.cutBroadcasts) {
      const calls = [JSON.parse(body)].flat() as { method?: string; params?: unknown[] }[];
      const broadcast = calls.find((call) => call.method === 'eth_sendRawTransaction');
      if (broadcast) {
        request.socket.destroy();
        firstCut(String(broadcast.params?.[0]));
        return;
      }
    }
    try {
      const answer = await fetch(target, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      const text = await answer.text();
      if (state.down) return void request.socket.destroy();
      response.writeHead(answer.status, { 'Content-Type': 'application/json' });
      response.end(text);
    } catch {
      request.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get down() {
      return state.down;
    },
    set down(value: boolean) {
      state.down = value;
    },
    get cutBroadcasts() {
      return state.cutBroadcasts;
    },
    set cutBroadcasts(value: boolean) {
      state.cutBroadcasts = value;
    },
    broadcastCut,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
