// A gateway killed (SIGKILL) while the paid work runs leaves a reservation behind. Its instance stops beating
// (see store/reservation-heartbeat.ts), so after a restart on the same data the same proof is taken over
// within one reservation lease (10 s by default), not after abandonedAfterMs (10 min by default), well
// inside the proof's own 60 s validity. The chain and the upstream run in the test process and outlive it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { postJson } from './support/service.ts';
import { startChildService, type ChildService } from './support/child-service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';

const CHAT = '/api/v1/ai/chat';
const BODY = { model: 'up/chat', prompt: 'Tell me about the tides', max_tokens: 16 };

/** An OpenAI-compatible chat upstream that holds every request while `hang` is set, else answers at once. */
let upstream: { server: Server; url: string; hang: boolean; arrived: number };
let chain: EvmSandbox;
let dataDir: string;

before(async () => {
  chain = await startEvmSandbox(NETWORKS.base as EvmNetwork);
  dataDir = mkdtempSync(join(tmpdir(), 'x402-lease-'));
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      upstream.arrived++;
      if (upstream.hang) return;
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'The tides follow the moon.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, hang: true, arrived: 0 };
});
after(async () => {
  upstream.server.closeAllConnections();
  await new Promise((resolve) => upstream.server.close(resolve));
  await chain.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A live gateway on the test chain, with abandonedAfterMs left at its 10-minute default. */
function startGateway(): Promise<ChildService> {
  return startChildService(
    {
      logLevel: 'silent',
      reconcileIntervalMs: 200,
      networks: { base: { payTo: chain.payTo, asset: chain.asset, facilitator: { type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: 'BASE_SETTLEMENT_KEY' } } },
      providers: { up: { type: 'openai-compatible', baseURL: upstream.url, maxRetries: 0, timeoutMs: 120_000 } },
      models: [{ id: 'up/chat', provider: 'up', upstreamModel: 'm', capability: 'chat', maxTokens: 64, defaultMaxTokens: 16, price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } }],
    },
    { BASE_SETTLEMENT_KEY: chain.settlementPrivateKey },
    { dataDir },
  );
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

test('SIGKILL mid-generation, restart on the same data: the same proof runs and pays once within seconds, not 10 minutes', async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address, 5_000_000n);
  const first = await startGateway();
  let second: ChildService | undefined;
  try {
    const quote = await postJson(`${first.url}${CHAT}`, BODY, { 'X-Network': 'base' });
    const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    const price = BigInt(requirement.maxAmountRequired);
    const proof = await signEvmProof(buyer, requirement, 8453);
    const before = await chain.balanceOf(buyer.address);

    const dying = postJson(`${first.url}${CHAT}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof }).catch((error: unknown) => error);
    await waitFor('the generation to reach the upstream', async () => (upstream.arrived > 0 ? true : undefined), 30_000);
    await first.kill();
    assert.ok((await dying) instanceof Error, 'the client saw the connection die');
    upstream.hang = false;

    second = await startGateway();
    const killedAt = Date.now();
    // Retries of the very same proof, as a client does on 409: they must succeed once the dead holder's lease
    // ran out. The bound is generous for a loaded machine and still far below abandonedAfterMs (10 min).
    const delivered = await waitFor(
      'a retry of the same proof to be served',
      async () => {
        const response = await postJson(`${second!.url}${CHAT}`, BODY, { 'X-Network': 'base', 'X-PAYMENT': proof });
        const text = await response.text();
        if (response.status === 409) return undefined;
        return { status: response.status, text };
      },
      45_000,
    );
    assert.equal(delivered.status, 200, delivered.text);
    assert.match(delivered.text, /The tides follow the moon/);
    assert.ok(Date.now() - killedAt < 60_000, 'within the proof validity');
    assert.equal(await chain.balanceOf(buyer.address), before - price, 'charged exactly once');
  } finally {
    await second?.stop();
    await first.kill();
  }
});
