// The gateway paying through a remote facilitator over HTTP: an official client pays, the facilitator's
// /verify and /settle do the chain work, the money moves once; a rejected proof carries the remote's reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wrapFetchWithPayment } from 'x402-fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { LocalEvmFacilitator } from '../src/payments/facilitators/evm/local-evm.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { loadConfig } from '../src/config/load.ts';
import { startService, type RunningService } from '../src/service.ts';
import { startFacilitatorServer } from './support/facilitator-server.ts';
import { postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { RemoteFacilitator } from '../src/payments/facilitators/remote.ts';
import { decodeV1Proof } from '../src/x402/v1/codec.ts';
import { requirementFromStored } from '../src/x402/model.ts';

const BODY = { text: 'Paid through a remote facilitator.' };
let chain: EvmSandbox;
let facilitator: Awaited<ReturnType<typeof startFacilitatorServer>>;
let gateway: RunningService;
let dataDir: string;

before(async () => {
  const network = NETWORKS.base as EvmNetwork;
  chain = await startEvmSandbox(network);
  const local = new LocalEvmFacilitator({
    network,
    rpcUrl: chain.rpcUrl,
    settlementPrivateKey: chain.settlementPrivateKey,
    asset: chain.asset,
    eip712: chain.eip712,
    receiptTimeoutMs: 10_000,
    pollingIntervalMs: 50,
  });
  facilitator = await startFacilitatorServer('base', local, { requiredAuthorization: 'Bearer test-token' });
  dataDir = mkdtempSync(join(tmpdir(), 'x402-remote-'));
  process.env.FACILITATOR_AUTH = 'Bearer test-token'; // a secret: from the environment, never the config
  gateway = await startService(
    loadConfig(
      {},
      {
        port: 0,
        dataDir,
        logLevel: 'silent',
        networks: {
          base: {
            payTo: chain.payTo,
            asset: chain.asset,
            facilitator: { type: 'remote', url: facilitator.url, authorizationEnv: 'FACILITATOR_AUTH', timeoutMs: 10_000 },
          },
        },
      },
    ),
  );
});
after(async () => {
  await gateway.stop();
  await facilitator.stop();
  await chain.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('x402-fetch pays through the remote facilitator; the buyer is charged exactly once', async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address, 5_000_000n);
  const response = await wrapFetchWithPayment(fetch, buyer)(`${gateway.url}/api/v1/ai/tts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
    body: JSON.stringify(BODY),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const receipt = JSON.parse(Buffer.from(response.headers.get('x-payment-response')!, 'base64').toString());
  assert.equal(receipt.success, true);
  const price = 5_000_000n - (await chain.balanceOf(buyer.address));
  assert.ok(price > 0n);
  assert.equal(await chain.balanceOf(chain.payTo), price);
  assert.ok(facilitator.calls.includes('POST /verify') && facilitator.calls.includes('POST /settle'));
});

test('the remote facilitator client talks v1 to a v1-only facilitator and v2 to one whose /supported lists v2', async () => {
  // the gateway above talks to a v1-only facilitator: every request it sent was x402Version 1
  assert.ok(facilitator.versionsSeen.length > 0);
  assert.deepEqual([...new Set(facilitator.versionsSeen)], [1]);

  const local = new LocalEvmFacilitator({
    network: NETWORKS.base as EvmNetwork,
    rpcUrl: chain.rpcUrl,
    settlementPrivateKey: chain.settlementPrivateKey,
    asset: chain.asset,
    eip712: chain.eip712,
    receiptTimeoutMs: 10_000,
    pollingIntervalMs: 50,
  });
  const v2Server = await startFacilitatorServer('base', local, { versions: [1, 2] });
  try {
    const remote = new RemoteFacilitator({ url: v2Server.url, network: NETWORKS.base, timeoutMs: 10_000 });
    assert.deepEqual(await remote.requirementExtra(), chain.eip712);
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(buyer.address, 5_000_000n);
    const quote = await postJson(`${gateway.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'base' });
    const wire = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    const proof = decodeV1Proof(await signEvmProof(buyer, wire, 8453));
    assert.ok(typeof proof !== 'string');
    const requirement = requirementFromStored(wire)!;
    const payment = { ...proof, network: 'base' as const };
    assert.deepEqual(await remote.verify(payment, requirement), { isValid: true, payer: buyer.address });
    assert.equal((await remote.settle(payment, requirement)).status, 'settled');
    assert.deepEqual(v2Server.versionsSeen, [2, 2]);
    assert.equal(await chain.balanceOf(buyer.address), 5_000_000n - BigInt(wire.maxAmountRequired));
  } finally {
    await v2Server.stop();
  }
});

test("a proof the remote facilitator rejects is a 402 carrying the facilitator's reason; nothing moves", async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address, 5_000_000n);
  const quote = await postJson(`${gateway.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'base' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  const proof = await signEvmProof(buyer, requirement, 8453, { chainId: 1 });
  const response = await postJson(`${gateway.url}/api/v1/ai/tts`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
  assert.equal(response.status, 402);
  assert.match(((await response.json()) as { error: string }).error, /signature/);
  assert.equal(await chain.balanceOf(buyer.address), 5_000_000n);
});

test('a live gateway serves no playground, no faucet, and /docs links no playground', async () => {
  for (const path of ['/playground', '/playground/assets/app.js', '/sandbox/balance?network=base&address=0x0000000000000000000000000000000000000001']) {
    const response = await fetch(`${gateway.url}${path}`);
    assert.equal(response.status, 404, path);
    assert.equal(((await response.json()) as { code: string }).code, 'not_found');
  }
  const docs = await (await fetch(`${gateway.url}/docs`)).text();
  assert.doesNotMatch(docs, /playground/i);
});
