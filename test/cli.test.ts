// The x402-ai CLI as a buyer would run it: a subprocess against a sandbox server (base and solana), keys from
// the environment or a key file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestService } from './support/service.ts';
import { CHAT_PATH, CHAT_TEXT, OpenAIUpstream, upstreamChatConfig } from './support/openai-upstream.ts';
import { getBase58Decoder } from '@solana/kit';
import { balanceOf, fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import { formatUsdc } from '../src/client/usdc.ts';
import { unusedPort } from './support/ports.ts';
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

async function runCli(args: string[], env: Record<string, string>, url = service.url): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--url', url], { env: { ...process.env, ...env } });
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

test('--pay-to another address than the gateway asks for refuses to sign: exit 1 naming both, nothing moves; a malformed one is a usage error', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const refused = await cli(['chat', 'Hello', '--pay-to', `0x${'de'.repeat(20)}`], buyer.key);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /asks to pay "0x[0-9a-fA-F]{40}", not 0xdede.*nothing was signed/);
  assert.equal(await balanceOf(service, 'base', buyer.address), before);
  const payTo = service.rails.get('base')!.payTo;
  const paid = await cli(['chat', 'Hello', '--max-tokens', '4', '--pay-to', payTo.toLowerCase()], buyer.key);
  assert.equal(paid.code, 0, paid.stderr);
  assert.equal((await cli(['chat', 'Hello', '--pay-to', 'nobody'], buyer.key)).code, 2);
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

test('Solana: tts with --key-file (solana-keygen JSON) prints the price and the tx, and no explorer link for a sandbox chain', async () => {
  const buyer = await fundedSolanaBuyerKey(service, ['solana']);
  const keyFile = join(workDir, 'id.json');
  writeFileSync(keyFile, JSON.stringify([...buyer.secretKey]), { mode: 0o600 });
  const before = await balanceOf(service, 'solana', buyer.address);
  const rpcUrl = service.sandbox!.chains.get('solana')!.rpcUrl;
  const speech = await solanaCli(['tts', 'Hello from Solana', '--out', join(workDir, 'sol.wav'), '--key-file', keyFile, '--rpc-url', rpcUrl]);
  assert.equal(speech.code, 0, speech.stderr);
  assert.equal(readFileSync(join(workDir, 'sol.wav')).subarray(0, 4).toString(), 'RIFF');
  const paid = /paid (\d+(?:\.\d+)?) USDC on solana, tx ([1-9A-HJ-NP-Za-km-z]{64,88})\n\(sandbox chain: no public explorer shows it; its JSON-RPC is (\S+)\)/.exec(speech.stdout);
  assert.ok(paid, speech.stdout);
  assert.equal(paid[3], rpcUrl);
  assert.doesNotMatch(speech.stdout, /https:\/\/explorer/);
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

test('--version prints the package version, for both CLIs', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal((await run(process.execPath, [CLI, '--version'])).stdout, `x402-ai ${version}\n`);
  const admin = new URL('../src/client/admin-cli.ts', import.meta.url).pathname;
  assert.equal((await run(process.execPath, [admin, '--version'])).stdout, `x402-ai-admin ${version}\n`);
});

test('a gateway that is not running: the error names the URL and the reason (exit 1); a bad --url is a usage error', async () => {
  const closed = `http://127.0.0.1:${await unusedPort()}`;
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const chat = await runCli(['chat', 'Hello', '--model', 'local/demo-bigram', '--network', 'base'], { X402_EVM_PRIVATE_KEY: buyer.key }, closed);
  assert.equal(chat.code, 1);
  assert.match(chat.stderr, new RegExp(`cannot reach ${closed}/api/v1/ai/chat: connection refused`));
  const models = await runCli(['models'], {}, closed);
  assert.equal(models.code, 1);
  assert.match(models.stderr, new RegExp(`cannot reach ${closed}/api/v1/ai/models: connection refused`));
  const notUrl = await runCli(['models'], {}, 'localhost:4021');
  assert.equal(notUrl.code, 2);
  assert.match(notUrl.stderr, /not an http\(s\) URL/);
});

test('an unknown network is a usage error before any request; a network the gateway does not offer is refused unsigned', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  // a closed port: had the CLI sent anything, it would fail as unreachable (exit 1), not as a usage error
  const closed = `http://127.0.0.1:${await unusedPort()}`;
  const unknown = await runCli(['chat', 'Hi', '--network', 'base-mainnet'], { X402_EVM_PRIVATE_KEY: buyer.key }, closed);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown network "base-mainnet": use one of solana, solana-devnet, base, polygon/);
  const before = await balanceOf(service, 'base', buyer.address);
  const notOffered = await runCli(['chat', 'Hi', '--network', 'polygon'], { X402_EVM_PRIVATE_KEY: buyer.key });
  assert.equal(notOffered.code, 1);
  assert.match(notOffered.stderr, /takes no payment on polygon; it offers: base, solana; nothing was signed/);
  assert.equal(await balanceOf(service, 'base', buyer.address), before);
});

test('messages speak USDC: a quote over --max-price names both amounts; a malformed --max-price is a usage error', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const over = await cli(['chat', 'Hello', '--max-price', '0.000001'], buyer.key);
  assert.equal(over.code, 3);
  assert.match(over.stderr, /the quote, \d+\.\d+ USDC \(\d+ atomic units\), is above maxPrice, 0\.000001 USDC; nothing was signed/);
  const malformed = await cli(['chat', 'Hello', '--max-price', '$1'], buyer.key);
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /--max-price: "\$1" is not a USDC amount/);
  const paid = JSON.parse((await cli(['chat', 'Hi', '--json'], buyer.key)).stdout);
  assert.equal(paid.receipt.amountUsdc, formatUsdc(BigInt(paid.receipt.amount)));
});

test('tts --out: the extension is checked against the format before paying, picks it when --format is absent, and never overwrites', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const before = await balanceOf(service, 'base', buyer.address);
  const mismatch = await cli(['tts', 'Hello', '--format', 'mp3', '--out', join(workDir, 'mismatch.wav')], buyer.key);
  assert.equal(mismatch.code, 2);
  assert.match(mismatch.stderr, /--out .*mismatch\.wav does not fit --format mp3: name the file \.mp3/);
  const notAudio = await cli(['tts', 'Hello', '--out', join(workDir, 'hello.txt')], buyer.key);
  assert.equal(notAudio.code, 2);
  const taken = join(workDir, 'taken.wav');
  writeFileSync(taken, 'mine');
  const existing = await cli(['tts', 'Hello', '--out', taken], buyer.key);
  assert.equal(existing.code, 2);
  assert.match(existing.stderr, /taken\.wav already exists: nothing was paid/);
  assert.equal(readFileSync(taken, 'utf8'), 'mine');
  assert.equal(await balanceOf(service, 'base', buyer.address), before, 'none of these paid');
  assert.ok(!existsSync(join(workDir, 'mismatch.wav')) && !existsSync(join(workDir, 'hello.txt')));

  const mp3 = await cli(['tts', 'Hello in MP3', '--out', join(workDir, 'nested', 'by-extension.mp3'), '--json'], buyer.key);
  assert.equal(mp3.code, 0, mp3.stderr);
  const { result, file } = JSON.parse(mp3.stdout);
  assert.match(result.audioUrl, /\.mp3$/, 'the extension asked the gateway for MP3');
  assert.equal(file, join(workDir, 'nested', 'by-extension.mp3'));
  const bytes = readFileSync(file);
  assert.ok(bytes.subarray(0, 3).toString() === 'ID3' || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0), 'an MP3 file');
});

test('progress: on a terminal stderr shows what the call waits for and erases it; piped output gets none of it', async () => {
  const buyer = await fundedEvmBuyerKey(service, ['base']);
  const piped = await cli(['chat', 'Hello', '--max-tokens', '4'], buyer.key);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr.replace(/^npm warn.*\n/gm, ''), '');
  // script(1) gives the CLI a pseudo-terminal, as an interactive shell would
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, CLI, 'chat', 'Hello', '--max-tokens', '4', '--network', 'base', '--url', service.url].map(quote).join(' ');
  const { stdout: screen } = await run('script', ['-qec', command, '/dev/null'], { env: { ...process.env, X402_EVM_PRIVATE_KEY: buyer.key } });
  assert.match(screen, /asking for the price/);
  assert.match(screen, /generating \(the payment settles once the result exists\)/);
  assert.ok(screen.lastIndexOf('\r\x1b[K') < screen.indexOf('paid '), 'the line is erased before the result is printed, and only then');
});

test('chat without --model asks for the gateway\'s own first chat model (a live catalog has no embedded one)', async () => {
  const upstream = await new OpenAIUpstream().start();
  const gateway = await startTestService({
    networks: ['base'],
    config: upstreamChatConfig(upstream.baseURL),
  });
  try {
    const buyer = await fundedEvmBuyerKey(gateway, ['base']);
    const { code, stdout, stderr } = await runCli(['chat', 'Hello there', '--network', 'base', '--json'], { X402_EVM_PRIVATE_KEY: buyer.key }, gateway.url);
    assert.equal(code, 0, stderr);
    const { result } = JSON.parse(stdout);
    assert.equal(result.model, 'up/chat');
    assert.equal(result.response, CHAT_TEXT);
    assert.equal(upstream.received(CHAT_PATH).length, 1);
  } finally {
    await gateway.stop();
    await upstream.close();
  }
});
