// The pages a person uses, in a real browser (Debian's chromium through playwright-core): the playground
// funds its throwaway wallet, shows the price from the unpaid 402, pays with the official x402 client
// bundled for the browser, shows the image and plays the speech, and the money moved on the sandbox chain;
// /docs renders /openapi.json with the paid operations and their prices in USDC. No page asks anything
// of another origin.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http } from 'viem';
import { startTestService, postJson } from './support/service.ts';
import { openBrowser, type TestBrowser } from './support/browser.ts';
import { balanceOf } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';
import { formatUsdc } from '../src/pricing/usdc.ts';

const FAUCET_AMOUNT = 100_000_000n; // the faucet's default: 100 test USDC

let service: RunningService;
let browser: TestBrowser;

before(async () => {
  service = await startTestService({ networks: ['base'] });
  browser = await openBrowser();
});

after(async () => {
  await browser?.close();
  await service?.stop();
});

/** what the gateway itself quotes for a body, unpaid, in atomic units */
async function quoted(path: string, body: unknown): Promise<bigint> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  const { accepts } = (await response.json()) as { accepts: { maxAmountRequired: string }[] };
  return BigInt(accepts[0]!.maxAmountRequired);
}

function assertOnlyThisOrigin(requested: readonly string[]): void {
  const origins = new Set(requested.filter((url) => !url.startsWith('data:')).map((url) => new URL(url).origin));
  assert.deepEqual([...origins], [new URL(service.url).origin]);
}

/** Get the price, check it is the 402's, pay, and wait until the form says paid (or fail with its error). */
async function quoteAndPay(form: string, expectedPrice: string): Promise<string> {
  const { page } = browser;
  await page.click(`${form} .quote-button`);
  const quote = page.locator(`${form} .quote`);
  await page.waitForSelector(`${form} .quote.quoted, ${form} .quote.error`);
  const shown = (await quote.textContent()) ?? '';
  assert.ok(shown.startsWith(`Price: ${expectedPrice} on base`), shown);
  await page.click(`${form} .pay-button`);
  await page.waitForSelector(`${form} .quote.paid, ${form} .quote.error`);
  const outcome = (await quote.textContent()) ?? '';
  assert.match(outcome, /^Paid /, outcome);
  return (await page.locator(`${form} .receipt dd code`).textContent())!;
}

describe('the playground, in a real browser', () => {
  test('funds the throwaway wallet, pays for an image, shows it, and the payment settled on-chain', async () => {
    const { page } = browser;
    await page.goto(`${service.url}/playground`);
    await page.waitForSelector('body[data-ready="true"]');
    const address = (await page.locator('#wallet-address').textContent())!;
    assert.match(address, /^0x[0-9a-fA-F]{40}$/);
    assert.equal(await balanceOf(service, 'base', address), 0n);

    await page.click('#fund-button');
    await page.locator('#wallet-status', { hasText: /^Funded/ }).waitFor();
    assert.equal(await page.locator('#wallet-balance').textContent(), '100 USDC');
    assert.equal(await balanceOf(service, 'base', address), FAUCET_AMOUNT);

    await page.click('[data-tab="image"]');
    await page.selectOption('#image-form [name=size]', '256x256');
    const price = await quoted('/api/v1/ai/images', { model: 'preview-image', prompt: 'a lighthouse at dusk', size: '256x256', n: 1 });
    assert.equal(price, 2000n);
    const transaction = await quoteAndPay('#image-form', '0.002 USDC (2000 atomic units)');

    // the image is displayed: decoded by the browser at the size paid for
    const size = await page.locator('#image-form .result img').evaluate(async (image) => {
      if (!image.complete) await new Promise((resolve) => image.addEventListener('load', resolve, { once: true }));
      return [image.naturalWidth, image.naturalHeight];
    });
    assert.deepEqual(size, [256, 256]);

    // settled on-chain: the transaction succeeded and moved exactly the price from the browser's wallet
    const chain = service.sandbox!.chains.get('base')!;
    const receipt = await createPublicClient({ transport: http(chain.rpcUrl) }).getTransactionReceipt({ hash: transaction as `0x${string}` });
    assert.equal(receipt.status, 'success');
    assert.equal(await balanceOf(service, 'base', address), FAUCET_AMOUNT - price);
    const payment = (await (await fetch(`${service.url}/api/v1/payments/${transaction}`)).json()) as Record<string, unknown>;
    assert.equal(payment.state, 'settled');
    assert.equal(payment.amount, String(price));
    assert.equal((payment.payer as string).toLowerCase(), address.toLowerCase());

    // the receipt shows the amount and links the payment route; the balance shown follows
    const receiptText = (await page.locator('#image-form .receipt').textContent())!;
    assert.match(receiptText, /settled/);
    assert.match(receiptText, /0\.002 USDC \(2000 atomic units\)/);
    assert.equal(await page.locator('#image-form .receipt a').getAttribute('href'), `/api/v1/payments/${transaction}`);
    await page.locator('#wallet-balance', { hasText: '99.998 USDC' }).waitFor();

    // the official client chose the protocol itself: x402 v2, which the gateway offers beside v1
    const paidCall = browser.paymentHeaders.find((headers) => headers.url.endsWith('/api/v1/ai/images'));
    assert.deepEqual(paidCall?.names, ['payment-signature']);

    assertOnlyThisOrigin(browser.requested);
    // to look at the page as a person would: PLAYGROUND_SCREENSHOT=/tmp/playground.png
    if (process.env.PLAYGROUND_SCREENSHOT) await page.screenshot({ path: process.env.PLAYGROUND_SCREENSHOT, fullPage: true });
  });

  test('pays for speech and plays the audio back', async () => {
    const { page } = browser;
    await page.click('[data-tab="speech"]');
    await page.fill('#speech-form [name=text]', 'Paid for in the browser.');
    await page.selectOption('#speech-form [name=format]', 'mp3');
    const price = await quoted('/api/v1/ai/tts', { model: 'espeak-ng', text: 'Paid for in the browser.', voice: 'en-us', format: 'mp3' });
    await quoteAndPay('#speech-form', `${formatUsdc(price)} USDC (${price} atomic units)`);

    // the audio element's source loads until it can play through, then plays to its end
    const played = await page.locator('#speech-form .result audio').evaluate(async (audio) => {
      const HAVE_ENOUGH_DATA = 4;
      if (audio.readyState < HAVE_ENOUGH_DATA) await new Promise((resolve) => audio.addEventListener('canplaythrough', resolve, { once: true }));
      audio.muted = true; // a muted element may play without a user gesture
      const ended = new Promise((resolve) => audio.addEventListener('ended', resolve, { once: true }));
      await audio.play();
      await ended;
      return { source: audio.currentSrc, duration: audio.duration, playedTo: audio.currentTime, error: audio.error };
    });
    assert.match(played.source, /\/media\/[\w-]+\.mp3$/);
    assert.ok(played.duration > 0.5, `duration ${played.duration}`);
    assert.equal(played.playedTo, played.duration);
    assert.equal(played.error, null);
    assertOnlyThisOrigin(browser.requested);
  });

  test('a changed form clears the last result, its receipt and its price: they describe another request', async () => {
    const { page } = browser;
    await page.click('[data-tab="speech"]');
    // the speech paid for above is on show
    assert.equal(await page.locator('#speech-form .outcome').isVisible(), true);
    assert.match((await page.locator('#speech-form .quote').textContent()) ?? '', /^Paid /);
    await page.fill('#speech-form [name=text]', 'Another sentence, not paid for yet.');
    assert.equal(await page.locator('#speech-form .outcome').isVisible(), false);
    assert.equal(await page.locator('#speech-form .result audio').count(), 0);
    assert.equal(await page.locator('#speech-form .receipt dd').count(), 0);
    assert.equal(await page.locator('#speech-form .quote').textContent(), '');
    assert.equal(await page.locator('#speech-form .pay-button').isEnabled(), false);
  });

  test('a wallet too poor for the price: not paid, and the page says to fund it', async () => {
    const { page } = browser;
    await page.click('#new-wallet-button');
    await page.locator('#wallet-balance', { hasText: /^0 USDC$/ }).waitFor();
    await page.click('[data-tab="chat"]');
    await page.fill('#chat-form [name=prompt]', 'Who pays for this?');
    await page.click('#chat-form .quote-button');
    await page.waitForSelector('#chat-form .quote.quoted');
    await page.click('#chat-form .pay-button');
    await page.waitForSelector('#chat-form .quote.error, #chat-form .quote.paid');
    const text = (await page.locator('#chat-form .quote').textContent()) ?? '';
    assert.match(text, /^Not paid: 402.*insufficient_funds\. The wallet holds less test USDC than the price: .*“Fund with 100 test USDC” adds more$/);
  });

  test('a changed form needs a new price before it can pay', async () => {
    const { page } = browser;
    await page.click('[data-tab="chat"]');
    await page.click('#chat-form .quote-button');
    await page.waitForSelector('#chat-form .quote.quoted');
    assert.equal(await page.locator('#chat-form .pay-button').isEnabled(), true);
    await page.fill('#chat-form [name=prompt]', 'Something else, at another price.');
    assert.equal(await page.locator('#chat-form .pay-button').isEnabled(), false);
  });
});

describe('/docs, in a real browser', () => {
  test('renders /openapi.json with the paid operations and their prices in USDC', async () => {
    const { page } = browser;
    browser.requested.length = 0;
    browser.errors.length = 0;
    await page.goto(`${service.url}/docs`);
    await page.waitForSelector('.opblock-summary-path');
    const operations = await page.locator('.opblock-summary').evaluateAll((rows) =>
      rows.map((row) => `${row.querySelector('.opblock-summary-method')?.textContent} ${row.querySelector('.opblock-summary-path')?.textContent}`),
    );
    for (const path of ['/api/v1/ai/chat', '/api/v1/ai/images', '/api/v1/ai/tts']) assert.ok(operations.includes(`POST ${path}`), operations.join(', '));

    // in its group (Swagger UI's element id: operations-<tag, spaces as _>-<operationId>), not under "default"
    await page.click('#operations-Paid_generation-image');
    const description = page.locator('#operations-Paid_generation-image .opblock-description-wrapper').first();
    await description.waitFor();
    const text = (await description.textContent())!;
    assert.match(text, /preview-image/);
    assert.match(text, /256x256: 0\.002 USDC/);
    const groups = await page.locator('.opblock-tag').evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag')));
    assert.ok(groups.includes('Paid generation') && groups.includes('OpenAI-compatible'), groups.join(', '));
    assert.ok(!groups.includes('default'), groups.join(', '));
    assertOnlyThisOrigin(browser.requested);
    assert.deepEqual(browser.errors, []);
  });
});

describe('GET /sandbox/balance, which the playground shows', () => {
  test('gives an address its test USDC in atomic units, and refuses what is not an address of a sandbox network', async () => {
    const address = '0x00000000000000000000000000000000000000aa';
    await postJson(`${service.url}/sandbox/faucet`, { network: 'base', address, amount: '1234567' });
    const balance = async (query: string) => {
      const response = await fetch(`${service.url}/sandbox/balance?${query}`);
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    const funded = await balance(`network=base&address=${address}`);
    assert.equal(funded.status, 200);
    assert.equal(funded.body.balance, '1234567');
    for (const [query, field] of [
      ['network=base&address=not-an-address', 'address'],
      [`network=solana&address=${address}`, 'network'],
      [`network=base`, 'address'],
      [`network=base&address=${address}&extra=1`, 'extra'],
    ] as const) {
      const refused = await balance(query);
      assert.equal(refused.status, 400, query);
      assert.equal(refused.body.field, field, query);
    }
  });
});
