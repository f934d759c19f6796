// The x402-ai CLI as a buyer would run it: a subprocess against a sandbox server (base and solana), keys from
// the environment or a key file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestService } from './support/service.ts';
import { getBase58Decoder } from '@solana/kit';
import { balanceOf, fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import { formatUsdc } from '../src/client/usdc.ts';
import type { RunningService } from '../src/service.ts';

const run = promisify(execFile);
const CLI = new URL('../src/client/cli.ts', import.meta.url).pathname;

let service: RunningService;
let workDir: string;
before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
  workDir = mkdtempSync(join(tmpdir(), 'x402-cli-'));
});
after(async () => {
  await service.stop();
  rmSync(workDir, { recursive: true, force: true });
});

async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--url', service.url], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const cli = (args: string[], key: string) => runCli([...args, '--network', 'base'], { X402_EVM_PRIVATE_KEY: key });
const solanaCli = (args: string[], env: Record<string, string> = {}) => runCli([...args, '--network', 'solana'], env);

test('chat --json pays once and prints the result with its receipt', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const { code, stdout } = await cli(['chat', 'Hello there', '--max-tokens', '8', '--json'], buyer.key);
  assert.equal(code, 0);
  const { result, receipt } = JSON.parse(stdout);
  assert.equal(typeof result.response, 'string');
  assert.equal(await balanceOf(service, 'base', buyer.address), before - BigInt(receipt.amount));
});

test('image --out writes the paid images; tts --out writes the audio in the --format asked for; human output names the price', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const images = await cli(['image', 'a harbour', '--n', '2', '--size', '256x256', '--out', join(workDir, 'pics')], buyer.key);
  assert.equal(images.code, 0, images.stderr);
  assert.equal(readdirSync(join(workDir, 'pics')).filter((f) => f.endsWith('.png')).length, 2);
  assert.match(images.stdout, /paid \d+(\.\d+)? USDC on base, tx 0x[0-9a-f]{64}/);
  const speech = await cli(['tts', 'Hello from the command line', '--voice', 'en-us', '--out', join(workDir, 'hello.wav')], buyer.key);
  assert.equal(speech.code, 0, speech.stderr);
  assert.equal(readFileSync(join(workDir, 'hello.wav')).subarray(0, 4).toString(), 'RIFF');
  const ogg = await cli(['tts', 'Hello in Ogg Vorbis', '--format', 'ogg', '--out', join(workDir, 'hello.ogg')], buyer.key);
  assert.equal(ogg.code, 0, ogg.stderr);
  assert.equal(readFileSync(join(workDir, 'hello.ogg')).subarray(0, 4).toString(), 'OggS');
});

test('--max-price below the quote refuses to sign: exit 3, nothing moves', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const { code, stderr } = await cli(['chat', 'Hello', '--max-price', '0.000001'], buyer.key);
  assert.equal(code, 3);
  assert.match(stderr, /maxPrice/);
  assert.equal(await balanceOf(service, 'base', buyer.address), before);
});

test('models lists the catalog; receipt shows a payment, and its result to the payer; a missing key is a usage error', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const models = await cli(['models'], buyer.key);
  assert.equal(models.code, 0);
  assert.match(models.stdout, /espeak-ng/);
  assert.match(models.stdout, /formats wav mp3 ogg; text <= 4000 chars; price 0\.001 \+ 0\.002\/1k chars USDC/);
  assert.match(models.stdout, /price per image 256x256 0\.002, /);
  const paid = JSON.parse((await cli(['chat', 'Hi', '--json'], buyer.key)).stdout);
  const receipt = await cli(['receipt', paid.receipt.transaction], buyer.key);
  assert.equal(receipt.code, 0);
  assert.match(receipt.stdout, /^settled: /);
  assert.deepEqual(JSON.parse((await cli(['receipt', paid.receipt.transaction, '--json'], buyer.key)).stdout).result, paid.result);
  const stranger = await cli(['receipt', paid.receipt.transaction, '--json'], '');
  assert.equal(stranger.code, 0);
  assert.equal(JSON.parse(stranger.stdout).state, 'settled');
  assert.equal(JSON.parse(stranger.stdout).result, undefined, 'no key: the public facts only');
  const noKey = await cli(['chat', 'Hi'], '');
  assert.equal(noKey.code, 2);
});

test('Solana: chat --json pays with X402_SOLANA_SECRET_KEY (base58); exactly the price moves, once', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const key = getBase58Decoder().decode(buyer.secretKey);
  const payTo = service.rails.get('solana')!.payTo;
  const [buyerBefore, payToBefore] = await Promise.all([balanceOf(service, 'solana', buyer.address), balanceOf(service, 'solana', payTo)]);
  const { code, stdout, stderr } = await solanaCli(['chat', 'Hello there', '--max-tokens', '8', '--json'], { X402_SOLANA_SECRET_KEY: key });
  assert.equal(code, 0, stderr);
  const { result, receipt } = JSON.parse(stdout);
  assert.equal(typeof result.response, 'string');
  assert.equal(receipt.network, 'solana');
  assert.equal(receipt.payer, buyer.address);
  assert.match(receipt.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  const price = BigInt(receipt.amount);
  assert.ok(price > 0n);
  assert.equal(await balanceOf(service, 'solana', buyer.address), buyerBefore - price);
  assert.equal(await balanceOf(service, 'solana', payTo), payToBefore + price);
  assert.ok(!stdout.includes(key) && !stderr.includes(key));
});

test('Solana: tts with --key-file (solana-keygen JSON) prints the price, the tx and an explorer link', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const keyFile = join(workDir, 'id.json');
  writeFileSync(keyFile, JSON.stringify([...buyer.secretKey]), { mode: 0o600 });
  const before = await balanceOf(service, 'solana', buyer.address);
  const rpcUrl = service.sandbox!.chains.get('solana')!.rpcUrl;
  const speech = await solanaCli(['tts', 'Hello from Solana', '--out', join(workDir, 'sol.wav'), '--key-file', keyFile, '--rpc-url', rpcUrl]);
  assert.equal(speech.code, 0, speech.stderr);
  assert.equal(readFileSync(join(workDir, 'sol.wav')).subarray(0, 4).toString(), 'RIFF');
  const paid = /paid (\d+(?:\.\d+)?) USDC on solana, tx ([1-9A-HJ-NP-Za-km-z]{64,88})\nhttps:\/\/explorer\.solana\.com\/tx\/([1-9A-HJ-NP-Za-km-z]+)/.exec(speech.stdout);
  assert.ok(paid, speech.stdout);
  assert.equal(paid[3], paid[2]);
  assert.equal(formatUsdc(before - (await balanceOf(service, 'solana', buyer.address))), paid[1]);
});

test('Solana: a missing or malformed key and --rpc-url on EVM are usage errors; the key is never echoed', async () => {
  const noKey = await solanaCli(['chat', 'Hi'], { X402_SOLANA_SECRET_KEY: '' });
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /X402_SOLANA_SECRET_KEY/);
  const badKey = 'not-a-solana-key-0OIl';
  const malformed = await solanaCli(['chat', 'Hi'], { X402_SOLANA_SECRET_KEY: badKey });
  assert.equal(malformed.code, 2);
  assert.ok(!malformed.stderr.includes(badKey));
  const evm = await fundedEvmBuyerKey(service, ['base']);
  const rpcOnEvm = await cli(['chat', 'Hi', '--rpc-url', 'http://127.0.0.1:1'], evm.key);
  assert.equal(rpcOnEvm.code, 2);
});
