// Real payments on the sandbox EVM chains, paid by the unmodified official clients:
// x402-fetch 1.x and @x402/fetch 2.x. Balances are read on-chain before and after.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, decodeReceipt, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { receiptChallenge } from '../src/x402/receipt-challenge.ts';
import { parseMpegFrames, parseOggVorbis } from './support/audio-streams.ts';
import type { RunningService } from '../src/service.ts';

const CHAT = { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 16 };
const json = { 'Content-Type': 'application/json' };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base', 'polygon'] });
});
after(() => service.stop());

async function quote(path: string, body: unknown, network: string): Promise<bigint> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': network });
  const payment = (await response.json()) as { accepts: { maxAmountRequired: string }[] };
  return BigInt(payment.accepts[0]!.maxAmountRequired);
}

describe('official clients pay and get their result, charged exactly once', () => {
  test('x402-fetch 1.x with X-Network: base', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const payTo = service.rails.get('base')!.payTo;
    const price = await quote('/api/v1/ai/chat', CHAT, 'base');
    const [buyerBefore, payToBefore] = [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo)];

    const pay = wrapFetchV1(fetch, buyer);
    const response = await pay(`${service.url}/api/v1/ai/chat`, {
      method: 'POST',
      headers: { ...json, 'X-Network': 'base' },
      body: JSON.stringify(CHAT),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { id: string; model: string; response: string; usage: { tokens: number } };
    assert.equal(body.model, CHAT.model);
    assert.equal(typeof body.response, 'string');
    assert.ok(body.usage.tokens > 0);
    const receipt = decodeReceipt(response.headers.get('x-payment-response'));
    assert.equal(receipt.success, true);
    assert.equal(receipt.network, 'base');
    assert.equal(receipt.payer.toLowerCase(), buyer.address.toLowerCase());
    assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);

    assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - price);
    assert.equal(await balanceOf(service, 'base', payTo), payToBefore + price);
  });

  test('@x402/fetch 2.x without X-Network pays on the network its proof names', async () => {
    const buyer = await fundedEvmBuyer(service, ['base', 'polygon']);
    const client = registerExactEvmScheme(new x402Client(), { signer: buyer });
    const pay = wrapFetchV2(fetch, client);
    const response = await pay(`${service.url}/api/v1/ai/chat`, { method: 'POST', headers: json, body: JSON.stringify(CHAT) });
    assert.equal(response.status, 200, await response.clone().text());
    // it reads PAYMENT-REQUIRED first, so it pays on the v2 wire and is answered there (CAIP-2 network)
    const receipt = decodeReceipt(response.headers.get('payment-response'));
    const network = receipt.network === 'eip155:8453' ? 'base' : 'polygon';
    assert.ok(['eip155:8453', 'eip155:137'].includes(receipt.network));
    const price = await quote('/api/v1/ai/chat', CHAT, network);
    assert.equal(await balanceOf(service, network, buyer.address), 10_000_000n - price);
    const other = network === 'base' ? 'polygon' : 'base';
    assert.equal(await balanceOf(service, other, buyer.address), 10_000_000n, 'the other network is untouched');
  });
});

describe('paid media is stored and served by this service', () => {
  async function payFor(path: string, body: unknown): Promise<Record<string, any>> {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const response = await wrapFetchV1(fetch, buyer)(`${service.url}${path}`, {
      method: 'POST',
      headers: { ...json, 'X-Network': 'base' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Record<string, any>;
  }

  test('images: n PNG files of the requested size, at our own /media URLs', async () => {
    const body = await payFor('/api/v1/ai/images', { prompt: 'a lighthouse at dusk', n: 2, size: '256x256' });
    assert.equal(body.model, 'preview-image');
    assert.equal(body.images.length, 2);
    for (const url of body.images as string[]) {
      assert.ok(url.startsWith(`${service.url}/media/`));
      const image = await fetch(url);
      assert.equal(image.headers.get('content-type'), 'image/png');
      const bytes = Buffer.from(await image.arrayBuffer());
      assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
      assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [256, 256]);
    }
  });

  test('tts: a WAV file at our own /media URL, seekable by range', async () => {
    const body = await payFor('/api/v1/ai/tts', { text: 'Paid speech, served by range.', voice: 'en-us' });
    assert.equal(body.model, 'espeak-ng');
    assert.ok(body.audioUrl.startsWith(`${service.url}/media/`));
    const whole = await fetch(body.audioUrl);
    assert.equal(whole.headers.get('content-type'), 'audio/wav');
    const size = Number(whole.headers.get('content-length'));
    assert.equal(Buffer.from(await whole.arrayBuffer()).subarray(0, 4).toString(), 'RIFF');
    const tail = await fetch(body.audioUrl, { headers: { Range: 'bytes=100-' } });
    assert.equal(tail.status, 206);
    assert.equal(tail.headers.get('content-range'), `bytes 100-${size - 1}/${size}`);
  });

  test('tts format mp3: paid at the WAV price, an MPEG audio file at our own /media URL', async () => {
    const request = { text: 'Paid speech, encoded as MP3.', voice: 'en-us', format: 'mp3' };
    const price = await quote('/api/v1/ai/tts', request, 'base');
    assert.equal(price, await quote('/api/v1/ai/tts', { ...request, format: 'wav' }, 'base'), 'the format does not change the price');
    const buyer = await fundedEvmBuyer(service, ['base']);
    const before = await balanceOf(service, 'base', buyer.address);
    const response = await wrapFetchV1(fetch, buyer)(`${service.url}/api/v1/ai/tts`, {
      method: 'POST',
      headers: { ...json, 'X-Network': 'base' },
      body: JSON.stringify(request),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(await balanceOf(service, 'base', buyer.address), before - price);
    const body = (await response.json()) as { model: string; audioUrl: string };
    assert.equal(body.model, 'espeak-ng');
    assert.match(body.audioUrl, new RegExp(`^${service.url}/media/[A-Za-z0-9_-]{22}\\.mp3$`));
    const audio = await fetch(body.audioUrl);
    assert.equal(audio.headers.get('content-type'), 'audio/mpeg');
    const bytes = new Uint8Array(await audio.arrayBuffer());
    assert.equal(audio.headers.get('content-length'), String(bytes.length));
    const stream = parseMpegFrames(bytes);
    assert.deepEqual([stream.sampleRate, stream.channels], [22050, 1]);
    assert.ok(stream.durationSeconds > 1, `${stream.durationSeconds} s`);
  });

  test('tts format ogg: an Ogg Vorbis file at our own /media URL', async () => {
    const body = await payFor('/api/v1/ai/tts', { text: 'Paid speech, encoded as Ogg Vorbis.', format: 'ogg' });
    assert.match(body.audioUrl, /\.ogg$/);
    const audio = await fetch(body.audioUrl);
    assert.equal(audio.headers.get('content-type'), 'audio/ogg');
    const stream = parseOggVorbis(new Uint8Array(await audio.arrayBuffer()));
    assert.ok(stream.durationSeconds > 1, `${stream.durationSeconds} s`);
  });
});

describe('one payment, one use', () => {
  /** Captures the X-PAYMENT an official client sends, so the test can replay it. */
  async function payOnceCapturing(body: unknown): Promise<{ proof: string; response: Response; buyer: string; account: PrivateKeyAccount }> {
    const buyer = await fundedEvmBuyer(service, ['base']);
    let proof = '';
    const spy: typeof fetch = async (input, init) => {
      const header = new Headers(init?.headers).get('X-PAYMENT');
      if (header) proof = header;
      return fetch(input, init);
    };
    const response = await wrapFetchV1(spy, buyer)(`${service.url}/api/v1/ai/chat`, {
      method: 'POST',
      headers: { ...json, 'X-Network': 'base' },
      body: JSON.stringify(body),
    });
    return { proof, response, buyer: buyer.address, account: buyer };
  }

  test('replaying a settled proof returns the stored result and moves nothing', async () => {
    const { proof, response, buyer } = await payOnceCapturing(CHAT);
    const first = await response.json();
    const balance = await balanceOf(service, 'base', buyer);
    const replay = await postJson(`${service.url}/api/v1/ai/chat`, CHAT, { 'X-Network': 'base', 'X-PAYMENT': proof });
    assert.equal(replay.status, 200);
    assert.deepEqual(await replay.json(), first);
    assert.equal(await balanceOf(service, 'base', buyer), balance);
  });

  test('GET /api/v1/payments/<tx> without a payer signature shows only the public facts, never the result', async () => {
    const { response, buyer } = await payOnceCapturing(CHAT);
    const receipt = decodeReceipt(response.headers.get('x-payment-response'));
    const lookup = await fetch(`${service.url}/api/v1/payments/${receipt.transaction}`);
    assert.equal(lookup.status, 200);
    const payment = (await lookup.json()) as Record<string, unknown>;
    assert.equal(payment.state, 'settled');
    assert.equal(payment.transaction, receipt.transaction);
    assert.equal(String(payment.payer).toLowerCase(), buyer.toLowerCase());
    assert.equal(payment.resultAvailable, true);
    assert.equal(payment.result, undefined);
    assert.equal((await fetch(`${service.url}/api/v1/payments/0xdead`)).status, 404);
  });

  test('the payer, and only the payer, reads its result back by signing the receipt challenge', async () => {
    const { response, account } = await payOnceCapturing(CHAT);
    const paid = await response.json();
    const { transaction } = decodeReceipt(response.headers.get('x-payment-response'));
    const lookup = async (signer: PrivateKeyAccount, timestamp = Math.floor(Date.now() / 1000), id = transaction) =>
      fetch(`${service.url}/api/v1/payments/${id}`, {
        headers: {
          'X-Payer-Timestamp': String(timestamp),
          'X-Payer-Signature': await signer.signMessage({ message: receiptChallenge(id, timestamp) }),
        },
      });

    const own = await lookup(account);
    assert.equal(own.status, 200);
    const payment = (await own.json()) as { state: string; result: unknown };
    assert.equal(payment.state, 'settled');
    assert.deepEqual(payment.result, paid, 'exactly the 200 body of the paid call');
    const byKey = (await (await fetch(`${service.url}/api/v1/payments/${transaction}`)).json()) as { key: string };
    assert.deepEqual(((await (await lookup(account, undefined, byKey.key)).json()) as { result: unknown }).result, paid, 'by payment key too');

    const stranger = privateKeyToAccount(generatePrivateKey());
    for (const refused of [await lookup(stranger), await lookup(account, Math.floor(Date.now() / 1000) - 600)]) {
      assert.equal(refused.status, 401);
      const body = (await refused.json()) as { code: string; result?: unknown };
      assert.equal(body.code, 'unauthorized');
      assert.equal(body.result, undefined);
    }
    const unsigned = await fetch(`${service.url}/api/v1/payments/${transaction}`, { headers: { 'X-Payer-Timestamp': '1' } });
    assert.equal(unsigned.status, 401);
  });

  test('the same proof with a different body is rejected, at the same price or not', async () => {
    const { proof } = await payOnceCapturing(CHAT);
    const samePrice = { ...CHAT, prompt: CHAT.prompt.toUpperCase() };
    const pricier = { ...CHAT, max_tokens: 64 };
    // answered as a proof never seen would be: at the same price the chain says its nonce is spent (public),
    // at another price the amount does not match; never a word about the ledger's row
    for (const [body, reason] of [[samePrice, 'nonce_already_used'], [pricier, 'invalid_exact_evm_payload_authorization_value']] as const) {
      const other = await postJson(`${service.url}/api/v1/ai/chat`, body, { 'X-Network': 'base', 'X-PAYMENT': proof });
      assert.equal(other.status, 402);
      assert.equal(((await other.json()) as { error: string }).error, reason);
    }
  });
});
