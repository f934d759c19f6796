// The x402-ai CLI as a buyer would run it: a subprocess against a sandbox server, keys from the environment.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestService } from './support/service.ts';
import { balanceOf, fundedEvmBuyerKey } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

const run = promisify(execFile);
const CLI = new URL('../src/client/cli.ts', import.meta.url).pathname;

let service: RunningService;
let workDir: string;
before(async () => {
  service = await startTestService({ networks: ['base'] });
  workDir = mkdtempSync(join(tmpdir(), 'x402-cli-'));
});
after(async () => {
  await service.stop();
  rmSync(workDir, { recursive: true, force: true });
});

async function cli(args: string[], key: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--url', service.url, '--network', 'base'], {
      env: { ...process.env, X402_EVM_PRIVATE_KEY: key },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

test('chat --json pays once and prints the result with its receipt', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const { code, stdout } = await cli(['chat', 'Hello there', '--max-tokens', '8', '--json'], buyer.key);
  assert.equal(code, 0);
  const { result, receipt } = JSON.parse(stdout);
  assert.equal(typeof result.response, 'string');
  assert.equal(await balanceOf(service, 'base', buyer.address), before - BigInt(receipt.amount));
});

test('image --out writes the paid images; tts --out writes the audio; human output names the price', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const images = await cli(['image', 'a harbour', '--n', '2', '--size', '256x256', '--out', join(workDir, 'pics')], buyer.key);
  assert.equal(images.code, 0, images.stderr);
  assert.equal(readdirSync(join(workDir, 'pics')).filter((f) => f.endsWith('.png')).length, 2);
  assert.match(images.stdout, /paid \d+(\.\d+)? USDC on base, tx 0x[0-9a-f]{64}/);
  const speech = await cli(['tts', 'Hello from the command line', '--voice', 'en-us', '--out', join(workDir, 'hello.wav')], buyer.key);
  assert.equal(speech.code, 0, speech.stderr);
  assert.equal(readFileSync(join(workDir, 'hello.wav')).subarray(0, 4).toString(), 'RIFF');
});

test('--max-price below the quote refuses to sign: exit 3, nothing moves', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const { code, stderr } = await cli(['chat', 'Hello', '--max-price', '0.000001'], buyer.key);
  assert.equal(code, 3);
  assert.match(stderr, /maxPrice/);
  assert.equal(await balanceOf(service, 'base', buyer.address), before);
});

test('models lists the catalog; receipt shows a payment; a missing key is a usage error', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const models = await cli(['models'], buyer.key);
  assert.equal(models.code, 0);
  assert.match(models.stdout, /espeak-ng/);
  const paid = JSON.parse((await cli(['chat', 'Hi', '--json'], buyer.key)).stdout);
  const receipt = await cli(['receipt', paid.receipt.transaction], buyer.key);
  assert.equal(receipt.code, 0);
  assert.match(receipt.stdout, /^settled: /);
  const noKey = await cli(['chat', 'Hi'], '');
  assert.equal(noKey.code, 2);
});
