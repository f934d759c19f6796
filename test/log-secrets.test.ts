// What a gateway's logs hold when its RPC URL carries a hosted provider's key (user:password@, a key in the path
// and in the query, as hosted RPCs have it) and its RPC fails, and when an upstream's error message quotes the
// prompt: none of the key, and none of the prompt. A live gateway (a child process, its whole output kept) on the
// sandbox anvil behind a JSON-RPC proxy the test cuts; the upstream answers every chat with a 400 quoting the
// request it got.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { startRpcProxy, type RpcProxy } from './support/rpc-proxy.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { until } from './support/sse.ts';
import { upstreamChatConfig } from './support/openai-upstream.ts';

const KEY_ENV = 'X402_LOG_SECRETS_TEST_KEY';
const SECRETS = { password: 'hunter2rpcpass', pathKey: 'Ab12Cd34Ef56Gh78Ij90Kl12', queryKey: 'Qk55Rr66Ss77Tt88' };
const PROMPT = 'my secret diary entry about zebras';

let sandbox: EvmSandbox;
let proxy: RpcProxy;
let upstream: Server;
let gateway: ChildService;

before(async () => {
  sandbox = await startEvmSandbox(NETWORKS.base as EvmNetwork);
  proxy = await startRpcProxy(sandbox.rpcUrl);
  upstream = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => response.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: `rejected: ${body}` } })));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = new URL(proxy.url);
  const rpcUrl = `http://rpcuser:${SECRETS.password}@127.0.0.1:${port}/v2/${SECRETS.pathKey}?apikey=${SECRETS.queryKey}`;
  gateway = await startChildService(
    {
      networks: {
        base: { payTo: sandbox.payTo, asset: sandbox.asset, eip712: sandbox.eip712, facilitator: { type: 'local', rpcUrl, secretKeyEnv: KEY_ENV } },
      },
      ...upstreamChatConfig(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`),
    },
    { [KEY_ENV]: sandbox.settlementPrivateKey },
  );
});

after(async () => {
  await gateway?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
  await proxy?.close();
  await sandbox?.stop();
});

async function paidChat(): Promise<Response> {
  const body = { model: 'up/chat', prompt: PROMPT };
  const quote = await postJson(`${gateway.url}/api/v1/ai/chat`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const buyer = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(buyer.address, 1_000_000n);
  return postJson(`${gateway.url}/api/v1/ai/chat`, body, { 'X-Network': 'base', 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453) });
}

test('a keyed RPC URL failing and an upstream quoting the prompt: neither the key nor the prompt is logged', async () => {
  proxy.down = true;
  const unverified = await paidChat();
  assert.equal(unverified.status, 503, 'the RPC down: no verdict on the payment');
  await unverified.arrayBuffer();
  await until('the verification failure to be logged', () => gateway.logs.some((line) => line.msg === 'facilitator verify failed'));
  proxy.down = false;

  const failed = await paidChat();
  assert.equal(failed.status, 502);
  await failed.arrayBuffer();
  await until('the upstream failure to be logged', () => gateway.logs.some((line) => line.status === 502));

  const output = gateway.output.join('');
  for (const secret of Object.values(SECRETS)) assert.ok(!output.includes(secret), `${secret} in the logs`);
  assert.ok(!output.includes('zebras'), 'the prompt in the logs');
  assert.match(output, /facilitator verify failed/);
});
