// The local batch-settlement facilitator reads and sends through evmChainClient(): the process's one pool of
// keep-alive RPC connections (rpc-fetch.ts), as the exact and upto facilitators do. It once built its own viem
// client on the global fetch, a pool of its own. Checked on the wire: a recording proxy in front of a sandbox anvil
// sees which connection each JSON-RPC request came on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NETWORKS, type EvmNetwork } from '../../../x402/networks.ts';
import { startEvmSandbox, type EvmSandbox } from '../../../sandbox/evm/evm-sandbox.ts';
import { evmChainClient } from './chain-client.ts';
import { LocalEvmChannelFacilitator } from './local-evm-channels.ts';

const base = NETWORKS.base as EvmNetwork;
let sandbox: EvmSandbox;
let proxy: Server;
let proxyUrl: string;
/** the client port of the connection each request came on, in arrival order */
const connections: number[] = [];

before(async () => {
  sandbox = await startEvmSandbox(base);
  proxy = createServer((request, response) => {
    connections.push(request.socket.remotePort!);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      fetch(sandbox.rpcUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (answer) => response.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(await answer.text()))
        .catch(() => request.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

after(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await sandbox.stop();
});

test("the channel facilitator's reads go over the pooled connections every chain client of the process shares", async () => {
  const channels = new LocalEvmChannelFacilitator({ network: base, rpcUrl: proxyUrl, settlementPrivateKey: sandbox.settlementPrivateKey, receiptTimeoutMs: 5_000 });
  // another client of the process opens a connection and leaves it idle in the pool
  await evmChainClient(base, proxyUrl, 250).getBlockNumber();
  const pooled = connections.at(-1)!;

  const before = connections.length;
  assert.deepEqual(await channels.missingContracts(), [], 'the sandbox has the escrow and its collectors');
  const state = await channels.readChannel(`0x${'ab'.repeat(32)}`);
  assert.deepEqual([state.balance, state.totalClaimed, state.withdrawRequestedAt], [0n, 0n, 0]);
  const used = connections.slice(before);
  assert.ok(used.length >= 6, 'three code reads and three channel reads');
  assert.ok(used.includes(pooled), 'the facilitator took the idle pooled connection instead of opening its own');
});
