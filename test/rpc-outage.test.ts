// The RPC goes away while a settlement is being broadcast, then comes back. The gateway's RPC is a small proxy in
// front of the sandbox anvil (test/support/rpc-proxy.ts) that the test cuts and restores. The payer is told its
// settlement is pending (409: do not pay again) and comes back with the same proof, as told, until it gets its
// result or a refusal; it must end 200 and charged exactly once, or refused and charged nothing. Balances are
// read on-chain (each settlement waited for its receipt before the 200).
//   - The broadcast is cut and the node never gets the transaction, but the node answers the check that
//     follows ("broadcast_uncertain"): its nonce goes to later settlements, so its signed bytes can never be
//     mined. Reconciliation settles the authorization anew once the chain is reachable.
//   - The whole RPC is down from the broadcast on: the transaction's bytes are kept and sent again, the same
//     bytes, once the RPC is back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import { startTestService, postJson } from './support/service.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { decodeReceipt } from './support/sandbox-wallet.ts';
import { startRpcProxy, type RpcProxy } from './support/rpc-proxy.ts';

const base = NETWORKS.base as EvmNetwork;
const KEY_ENV = 'X402_RPC_OUTAGE_TEST_KEY';
const CHAT = { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 16 };

let sandbox: EvmSandbox;
const started: { service: RunningService; proxy: RpcProxy }[] = [];

before(async () => {
  sandbox = await startEvmSandbox(base);
  process.env[KEY_ENV] = sandbox.settlementPrivateKey;
});

after(async () => {
  for (const { service, proxy } of started) {
    await service.stop();
    await proxy.close();
  }
  await sandbox?.stop();
  delete process.env[KEY_ENV];
});

/** A live gateway whose `base` RPC is a fresh proxy in front of the sandbox anvil. */
async function gatewayBehindProxy(): Promise<{ service: RunningService; proxy: RpcProxy }> {
  const proxy = await startRpcProxy(sandbox.rpcUrl);
  const service = await startTestService({
    config: {
      sandbox: { enabled: false },
      networks: {
        base: {
          payTo: sandbox.payTo,
          asset: sandbox.asset,
          eip712: sandbox.eip712,
          facilitator: { type: 'local', rpcUrl: proxy.url, secretKeyEnv: KEY_ENV },
        },
      },
      settlementTimeoutMs: 3_000,
      reconcileIntervalMs: 200,
      settlingGraceMs: 300,
    },
  });
  started.push({ service, proxy });
  return { service, proxy };
}

async function payerWithProof(service: RunningService): Promise<{ payer: PrivateKeyAccount; proof: string; price: bigint }> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(payer.address, 1_000_000n);
  const quote = await postJson(`${service.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  return { payer, proof: await signEvmProof(payer, requirement, base.chainId), price: BigInt(requirement.maxAmountRequired) };
}

interface Answer {
  status: number;
  body: { code?: string; error?: string; transaction?: string | null };
  receipt: string | null;
}

async function pay(service: RunningService, proof: string): Promise<Answer> {
  const response = await postJson(`${service.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proof });
  return { status: response.status, body: (await response.json()) as Answer['body'], receipt: response.headers.get('x-payment-response') };
}

/** Comes back with the same proof while told the settlement is pending, as the 409 says; the last answer. */
async function comeBackUntilDecided(service: RunningService, proof: string, first: Answer, timeoutMs = 30_000): Promise<Answer[]> {
  const answers = [first];
  const deadline = Date.now() + timeoutMs;
  while (answers.at(-1)!.status === 409) {
    if (Date.now() > deadline) {
      throw new Error(`still told to wait after ${timeoutMs} ms (${answers.length} answers, the last: ${JSON.stringify(answers.at(-1)!.body)})`);
    }
    await sleep(200);
    answers.push(await pay(service, proof));
  }
  return answers;
}

/** 200 and charged exactly once (its receipt's transaction mined), or refused and charged nothing. */
async function assertChargedOnceOrNothing(payer: PrivateKeyAccount, price: bigint, before: { payer: bigint; payTo: bigint }, answers: Answer[]) {
  const final = answers.at(-1)!;
  const history = answers.map((a) => `${a.status} ${a.body.code ?? ''}`).join(' > ');
  const [payerNow, payToNow] = [await sandbox.balanceOf(payer.address), await sandbox.balanceOf(sandbox.payTo)];
  if (final.status === 200) {
    const receipt = decodeReceipt(final.receipt);
    assert.equal(receipt.success, true, history);
    assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(payerNow, before.payer - price, `200 and charged exactly once (${history})`);
    assert.equal(payToNow, before.payTo + price);
  } else {
    assert.equal(final.status, 402, `a clear refusal (${history})`);
    assert.equal(payerNow, before.payer, `refused and charged nothing (${history})`);
    assert.equal(payToNow, before.payTo);
  }
}

test('the broadcast is cut and the node never gets it: once the RPC is back the payer gets its result, charged once', async () => {
  const { service, proxy } = await gatewayBehindProxy();
  const { payer, proof, price } = await payerWithProof(service);
  const before = { payer: await sandbox.balanceOf(payer.address), payTo: await sandbox.balanceOf(sandbox.payTo) };

  proxy.cutBroadcasts = true;
  const first = await pay(service, proof);
  await proxy.broadcastCut;
  proxy.cutBroadcasts = false;
  assert.equal(first.status, 409, JSON.stringify(first.body));
  assert.equal(first.body.code, 'settlement_pending');

  const answers = await comeBackUntilDecided(service, proof, first);
  await assertChargedOnceOrNothing(payer, price, before, answers);
  assert.equal(answers.at(-1)!.status, 200, 'the authorization was unused and valid: it was settled anew and the result delivered');
});

test('the RPC is down from the broadcast on and restored: the same signed bytes are sent again, charged once', async () => {
  const { service, proxy } = await gatewayBehindProxy();
  const { payer, proof, price } = await payerWithProof(service);
  const before = { payer: await sandbox.balanceOf(payer.address), payTo: await sandbox.balanceOf(sandbox.payTo) };

  proxy.cutBroadcasts = true;
  const answering = pay(service, proof);
  await proxy.broadcastCut;
  proxy.down = true;
  const first = await answering;
  assert.equal(first.status, 409, JSON.stringify(first.body));
  assert.equal(first.body.code, 'settlement_pending');
  const readyz = await fetch(`${service.url}/readyz`);
  await readyz.arrayBuffer();
  assert.equal(readyz.status, 503, 'not ready while the only chain cannot be reached');
  proxy.cutBroadcasts = false;
  proxy.down = false;

  const answers = await comeBackUntilDecided(service, proof, first);
  await assertChargedOnceOrNothing(payer, price, before, answers);
  assert.equal(answers.at(-1)!.status, 200);
});
