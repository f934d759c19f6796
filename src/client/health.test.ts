import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { gatewayHealth } from './health.ts';
import { transactionLink } from './explorer.ts';

/** a local server answering GET /healthz with the given status and body */
async function healthServer(status: number, body: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/healthz' ? status : 404, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

test('a sandbox gateway is told apart from a live one (whose transactions get explorer links)', async () => {
  const cases: [number, string, boolean][] = [
    [200, JSON.stringify({ status: 'ok', mode: 'sandbox', sandboxNetworks: { base: { rpcUrl: 'http://127.0.0.1:9/' } } }), true],
    [200, JSON.stringify({ status: 'ok', mode: 'live' }), false],
    [503, JSON.stringify({ status: 'starting', mode: 'sandbox' }), false],
    [200, 'not json', false],
  ];
  for (const [status, body, sandbox] of cases) {
    const { url, server } = await healthServer(status, body);
    try {
      const health = await gatewayHealth(url);
      assert.equal(health.sandbox, sandbox, body);
      if (sandbox) assert.deepEqual(health.sandboxRpcUrls, { base: 'http://127.0.0.1:9/' });
    } finally {
      server.close();
    }
  }
  assert.equal(transactionLink('base', '0xabc'), 'https://basescan.org/tx/0xabc');
  assert.equal(transactionLink('solana-devnet', 'sig'), 'https://explorer.solana.com/tx/sig?cluster=devnet');
  assert.equal(transactionLink('unknown-chain', '0xabc'), undefined);
});
