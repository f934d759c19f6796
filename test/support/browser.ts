// A real browser for page tests: Debian's chromium (/usr/bin/chromium, installed by .ci/run) driven by
// playwright-core, headless, with a fresh profile that is deleted on close. No browser is downloaded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** quiet and offline: no sandbox (CI runs as root), no GPU, no QUIC, no background calls home */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  page: Page;
  /** every URL the page asked for, to check that nothing left this machine */
  requested: string[];
  /** the payment headers (x402 v1 X-PAYMENT, v2 PAYMENT-SIGNATURE) of each request that carried one */
  paymentHeaders: { url: string; names: string[] }[];
  /** console errors and uncaught exceptions of the page */
  errors: string[];
  close(): Promise<void>;
}

export async function openBrowser(): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'x402-chromium-'));
  // launchPersistentContext passes --user-data-dir=<userDataDir> (it refuses the flag in args)
  const context: BrowserContext = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1200, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // waits are for conditions; the limit only ends a test that would hang (CI's 2 cores may be busy)
  page.setDefaultTimeout(180_000);
  const requested: string[] = [];
  const errors: string[] = [];
  const paymentHeaders: TestBrowser['paymentHeaders'] = [];
  page.on('request', (request) => {
    requested.push(request.url());
    const names = Object.keys(request.headers()).filter((name) => name === 'x-payment' || name === 'payment-signature');
    if (names.length > 0) paymentHeaders.push({ url: request.url(), names });
  });
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return {
    page,
    requested,
    paymentHeaders,
    errors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
