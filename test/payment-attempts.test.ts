// A proof whose paid work keeps failing cannot be retried without limit (issue 16, item 5). Failed work is never
// charged and releases the proof, so the same proof may be sent again; but only maxFailedAttempts.unsettled times
// (3 by default): after that its own proof gets 402 payment_attempts_exhausted, on either wire, and a new payment is
// needed. Settled first, the paid-for work may fail maxFailedAttempts.settled times, then the payment stays settled,
// is marked for a refund and its proof gets 409 payment_attempts_exhausted. On both ledger engines, against a local
// OpenAI-protocol upstream that fails as scripted, paid on the sandbox chains.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';
import { wrapFetchWithPayment } from 'x402-fetch';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, fundedSolanaBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_PATH, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { startPostgres, type PostgresServer } from './support/postgres.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import type { RunningService } from '../src/service.ts';
import type { NetworkName } from '../src/x402/networks.ts';

const CHAT = '/api/v1/ai/chat';
const BODY = { model: 'flaky/chat', prompt: 'Tell me about the sea', max_tokens: 16 };
const UPSTREAM_DOWN = { kind: 'status', status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } } as const;
const CHAIN_IDS: Partial<Record<NetworkName, number>> = { base: 8453, polygon: 137 };
/** the default bound (config.maxFailedAttempts.unsettled) */
const UNSETTLED_LIMIT = 3;
/** configured here for settle-first calls (polygon and solana) */
const SETTLED_LIMIT = 2;

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

let postgres: PostgresServer;
before(async () => {
  postgres = await startPostgres();
});
after(() => postgres?.stop());

for (const engine of ['SQLite', 'PostgreSQL'] as const) {
  describe(`failed attempts per proof, ${engine} ledger`, () => {
    let upstream: OpenAIUpstream;
    let service: RunningService;

    before(async () => {
      upstream = await startOpenAIUpstream();
      service = await startTestService({
        networks: ['base', 'polygon', 'solana'],
        config: {
          ...(engine === 'PostgreSQL' ? { databaseUrl: await postgres.createDatabase() } : {}),
          settleFirst: ['polygon:chat', 'solana:chat'],
          maxFailedAttempts: { settled: SETTLED_LIMIT },
          providers: { flaky: { type: 'openai-compatible', baseURL: upstream.baseURL, maxRetries: 0, timeoutMs: 10_000 } },
          models: [
            ...embeddedModels(),
            {
              id: 'flaky/chat',
              provider: 'flaky',
              upstreamModel: 'mock-chat-1',
              capability: 'chat',
              maxTokens: 64,
              defaultMaxTokens: 16,
              price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
            },
          ],
        },
      });
    });
    after(async () => {
      await service?.stop();
      await upstream?.close();
    });

    /** A fresh signed proof for BODY on `network`, as the headers of the chosen wire, and its price. */
    async function paymentHeaders(buyer: PrivateKeyAccount, network: NetworkName, wire: 1 | 2): Promise<{ headers: Record<string, string>; price: bigint }> {
      const quote = await postJson(`${service.url}${CHAT}`, BODY, { 'X-Network': network });
      assert.equal(quote.status, 402);
      const requirement = ((await quote.json()) as { accepts: any[] }).accepts[0];
      const v1 = await signEvmProof(buyer, requirement, CHAIN_IDS[network]!);
      const price = BigInt(requirement.maxAmountRequired);
      if (wire === 1) return { headers: { 'X-PAYMENT': v1 }, price };
      // the same authorization as a v2 proof of the server's own v2 requirement
      const accepted = decode(quote.headers.get('PAYMENT-REQUIRED')).accepts[0];
      return { headers: { 'PAYMENT-SIGNATURE': encode({ x402Version: 2, accepted, payload: decode(v1).payload }) }, price };
    }

    /** The same headers with the proof's signature replaced by zeros: the payment's public key, no proof. */
    function forged(headers: Record<string, string>): Record<string, string> {
      const [[name, value]] = Object.entries(headers) as [[string, string]];
      const document = decode(value);
      document.payload.signature = `0x${'00'.repeat(65)}`;
      return { [name]: encode(document) };
    }

    const paidCall = (headers: Record<string, string>) => postJson(`${service.url}${CHAT}`, BODY, headers);

    /** A funded buyer's proof for BODY on a settle-first network: EVM signed here, Solana by x402-fetch (stopped before sending it). */
    async function settleFirstProof(network: 'polygon' | 'solana'): Promise<{ headers: Record<string, string>; price: bigint; address: string }> {
      if (network === 'polygon') {
        const buyer = await fundedEvmBuyer(service, ['polygon']);
        return { ...(await paymentHeaders(buyer, 'polygon', 1)), address: buyer.address };
      }
      const buyer = await fundedSolanaBuyer(service, ['solana']);
      let proof = '';
      const capture: typeof fetch = async (input, init) => {
        const header = new Headers(init?.headers).get('X-PAYMENT');
        if (!header) return fetch(input, init);
        proof = header;
        return new Response('{}', { status: 499 });
      };
      const rpcUrl = service.sandbox!.chains.get('solana')!.rpcUrl;
      await wrapFetchWithPayment(capture, buyer as never, undefined, undefined, { svmConfig: { rpcUrl } })(`${service.url}${CHAT}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Network': 'solana' },
        body: JSON.stringify(BODY),
      });
      assert.ok(proof, 'x402-fetch signed a Solana proof');
      const quote = await postJson(`${service.url}${CHAT}`, BODY, { 'X-Network': 'solana' });
      const price = BigInt(((await quote.json()) as { accepts: { maxAmountRequired: string }[] }).accepts[0]!.maxAmountRequired);
      return { headers: { 'X-PAYMENT': proof }, price, address: buyer.address };
    }

    for (const wire of [1, 2] as const) {
      const header = wire === 1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE';
      test(`${header}: the same proof fails ${UNSETTLED_LIMIT} times uncharged, then is refused; a fresh proof works once the upstream recovers`, async () => {
        upstream.reset();
        const buyer = await fundedEvmBuyer(service, ['base']);
        const funds = await balanceOf(service, 'base', buyer.address);
        const { headers } = await paymentHeaders(buyer, 'base', wire);

        upstream.fail(CHAT_PATH, UPSTREAM_DOWN, UNSETTLED_LIMIT);
        for (let attempt = 1; attempt <= UNSETTLED_LIMIT; attempt++) {
          const failed = await paidCall(headers);
          assert.equal(failed.status, 502, `attempt ${attempt} fails as the upstream does`);
          assert.equal(((await failed.json()) as { code: string }).code, 'upstream_error');
          assert.equal(await balanceOf(service, 'base', buyer.address), funds, `nothing charged after attempt ${attempt}`);
        }
        assert.equal(upstream.received(CHAT_PATH).length, UNSETTLED_LIMIT);

        // the upstream works again (its scripted faults are used up), yet this proof has had its chances
        const refused = await paidCall(headers);
        assert.equal(refused.status, 402);
        const body = (await refused.json()) as { x402Version: number; error: string; accepts: unknown[] };
        assert.match(body.error, /^payment_attempts_exhausted: the paid work failed 3 times with this payment, which is no longer accepted; nothing was charged/);
        assert.equal(body.x402Version, 1);
        assert.equal(body.accepts.length, 1, 'the requirement to sign a new payment against');
        assert.match(decode(refused.headers.get('PAYMENT-REQUIRED')).error, /^payment_attempts_exhausted/);
        assert.equal(upstream.received(CHAT_PATH).length, UNSETTLED_LIMIT, 'the refused proof never reached the model');

        // the payment's public key without its proof learns nothing of it
        const forgery = await paidCall(forged(headers));
        assert.equal(forgery.status, 402);
        assert.doesNotMatch(((await forgery.json()) as { error: string }).error, /exhausted|attempt|failed/);
        assert.equal(await balanceOf(service, 'base', buyer.address), funds, 'nothing charged, ever, for this proof');

        const fresh = await paymentHeaders(buyer, 'base', wire);
        const paid = await paidCall(fresh.headers);
        assert.equal(paid.status, 200);
        assert.equal(((await paid.json()) as { model: string }).model, 'flaky/chat');
        assert.equal(await balanceOf(service, 'base', buyer.address), funds - fresh.price, 'the fresh proof is charged once');
        assert.equal((await paidCall(headers)).status, 402, 'the exhausted proof stays refused');
      });
    }

    for (const network of ['polygon', 'solana'] as const) {
      test(`settled first on ${network}: the paid-for work may fail ${SETTLED_LIMIT} times, then the payment is recorded for a refund and its proof refused`, async () => {
        upstream.reset();
        const { headers, price, address } = await settleFirstProof(network);
        const funds = await balanceOf(service, network, address);

        upstream.fail(CHAT_PATH, UPSTREAM_DOWN, SETTLED_LIMIT);
        const first = await paidCall(headers);
        assert.equal(first.status, 502);
        assert.match(((await first.json()) as { error: string }).error, /your payment is settled: retry with the same X-PAYMENT to run it again at no charge$/);
        assert.equal(await balanceOf(service, network, address), funds - price, 'settled before the work');

        const last = await paidCall(headers);
        assert.equal(last.status, 502);
        assert.match(((await last.json()) as { error: string }).error, /its work has now failed 2 times: it will not run again, and the payment is recorded for a refund/);

        const refused = await paidCall(headers);
        assert.equal(refused.status, 409);
        const body = (await refused.json()) as { code: string; error: string; transaction: string };
        assert.equal(body.code, 'payment_attempts_exhausted');
        assert.ok(body.transaction, 'the transaction to claim the refund with');
        assert.equal(upstream.received(CHAT_PATH).length, SETTLED_LIMIT, 'the working upstream was not called again');
        assert.equal(await balanceOf(service, network, address), funds - price, 'charged once, never again');

        // what the operator refunds: the settled payment without a result, marked in the ledger
        const receipt = (await (await fetch(`${service.url}/api/v1/payments/${body.transaction}`)).json()) as Record<string, unknown>;
        assert.deepEqual([receipt.state, receipt.resultAvailable, receipt.error], ['settled', false, 'payment_attempts_exhausted']);
      });
    }
  });
}
