// A settled payment's key is public (EVM: payer + nonce, on the chain and the receipt route), so it must not
// unlock the result. Only the proof that was accepted, byte for byte (signature included) and still within its
// validity, replays the result; a forgery carrying the same key gets exactly what an unknown forgery gets,
// whatever the body: no result, no hint. On EVM and Solana, on the v1 (X-PAYMENT) and v2 (PAYMENT-SIGNATURE) wires.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { startTestService, postJson } from './support/service.ts';
import { fundedEvmBuyer, fundedSolanaBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { quoteFor } from './support/paid-call.ts';
import { NETWORKS, type NetworkName } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

const PATH = '/api/v1/ai/chat';
const BODY = { model: 'local/demo-bigram', prompt: 'Hello there', max_tokens: 8 };
// same length, so the same price: only the body's identity differs
const OTHER_BODY = { ...BODY, prompt: 'Hello where' };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
});
after(() => service.stop());

const sentHeaders = (input: Parameters<typeof fetch>[0], init?: RequestInit): Headers =>
  new Headers(init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined));
const rpcUrl = (network: NetworkName) => service.sandbox!.chains.get(network)!.rpcUrl;
const decode = (header: string): any => JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

/** The proof an official client signs for BODY, stopped before it is sent. */
async function capturedProof(wire: 1 | 2, network: NetworkName): Promise<string> {
  const headerName = wire === 1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE';
  let proof = '';
  const capture: typeof fetch = async (input, init) => {
    const header = sentHeaders(input, init).get(headerName);
    if (header) {
      proof = header;
      return new Response('{}', { status: 499 });
    }
    return fetch(input, init);
  };
  const evm = NETWORKS[network].family === 'evm';
  const buyer = evm ? await fundedEvmBuyer(service, [network]) : await fundedSolanaBuyer(service, [network], 5_000_000n);
  const init = { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': network }, body: JSON.stringify(BODY) };
  if (wire === 1) {
    await wrapFetchV1(capture, buyer as never, undefined, undefined, { svmConfig: { rpcUrl: rpcUrl(network) } })(`${service.url}${PATH}`, init);
  } else {
    const client = evm
      ? registerExactEvmScheme(new x402Client(), { signer: buyer as never })
      : new x402Client().register(NETWORKS[network].caip2 as `${string}:${string}`, new ExactSvmScheme(buyer as never, { rpcUrl: rpcUrl(network) }));
    await wrapFetchV2(capture, client)(`${service.url}${PATH}`, init);
  }
  assert.ok(proof, `the client signed a v${wire} proof`);
  return proof;
}

/** The same proof with its signature zeroed: what anyone who knows the public key of the payment can build. */
function forged(header: string): string {
  const proof = decode(header);
  if (typeof proof.payload.signature === 'string') {
    proof.payload.signature = `0x${'00'.repeat(65)}`;
  } else {
    const transaction = Buffer.from(proof.payload.transaction, 'base64');
    // the payer's signature, the second (the first is the fee payer's, empty until settlement); the signed
    // message, and so the payment key, is unchanged
    transaction.fill(0, 65, 129);
    proof.payload.transaction = transaction.toString('base64');
  }
  return encode(proof);
}

async function send(wire: 1 | 2, proof: string, body: unknown = BODY) {
  const response = await postJson(`${service.url}${PATH}`, body, { [wire === 1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE']: proof });
  return { status: response.status, text: await response.text() };
}

for (const network of ['base', 'solana'] as const) {
  for (const wire of [1, 2] as const) {
    describe(`${network}, v${wire}`, () => {
      test('a forged replay of a settled payment gets no result and the same answer as an unknown forgery, whatever the body', async () => {
        const genuine = await capturedProof(wire, network);
        const paid = await send(wire, genuine);
        assert.equal(paid.status, 200, paid.text);

        const unknown = await send(wire, forged(await capturedProof(wire, network)));
        assert.equal(unknown.status, 402, unknown.text);
        const unknownError = (JSON.parse(unknown.text) as { error: string }).error;

        for (const body of [BODY, OTHER_BODY]) {
          const replay = await send(wire, forged(genuine), body);
          assert.equal(replay.status, 402, replay.text);
          assert.equal((JSON.parse(replay.text) as { error: string }).error, unknownError);
          assert.ok(!replay.text.includes((JSON.parse(paid.text) as { response: string }).response), 'no part of the result');
          assert.doesNotMatch(replay.text, /already|different request|in progress|pending/);
        }

        const again = await send(wire, genuine);
        assert.equal(again.status, 200, 'the accepted proof itself still replays its result');
        assert.equal(again.text, paid.text);
      });
    });
  }
}

test('the accepted proof past its validity replays nothing', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const requirement = await quoteFor(`${service.url}${PATH}`, BODY, 'base');
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 12);
  const proof = await signEvmProof(buyer, requirement, (NETWORKS.base as { chainId: number }).chainId, { validBefore });
  const paid = await postJson(`${service.url}${PATH}`, BODY, { 'X-PAYMENT': proof });
  assert.equal(paid.status, 200, await paid.text());
  // wait for the condition: the clock past the authorization's validBefore
  while (BigInt(Math.floor(Date.now() / 1000)) <= validBefore) await new Promise((resolve) => setTimeout(resolve, 250));
  const late = await postJson(`${service.url}${PATH}`, BODY, { 'X-PAYMENT': proof });
  assert.equal(late.status, 402);
  assert.match(((await late.json()) as { error: string }).error, /valid_before/);
});
