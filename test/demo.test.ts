// npm run demo as a newcomer runs it: a subprocess with no config, which must pay for a chat, an image and
// a speech on base and on solana, each network with its own freshly funded buyer, and finish cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseUsdc } from '../src/client/usdc.ts';

const DEMO = fileURLToPath(new URL('../scripts/demo.ts', import.meta.url));
const TX = { base: /^0x[0-9a-f]{64}$/, solana: /^[1-9A-HJ-NP-Za-km-z]{64,88}$/ };
const ADDRESS = { base: /^0x[0-9a-fA-F]{40}$/, solana: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/ };

test('npm run demo pays chat, image and speech on base and on solana, says so, and saves the media it paid for', async (t) => {
  // from a fresh directory and without the test runner's own settings: nothing but the script itself
  const cwd = mkdtempSync(join(tmpdir(), 'x402-demo-test-'));
  t.after(() => rmSync(cwd, { recursive: true, force: true }));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() };
  // execFile rejects unless the exit code is 0
  const { stdout } = await promisify(execFile)(process.execPath, [DEMO], { cwd, env, timeout: 240_000 });

  const paid = [...stdout.matchAll(/^ {3}paid (\d+(?:\.\d+)?) USDC on (\S+) · tx (\S+)$/gm)].map(([, price = '', network = '', tx = '']) => ({ price, network, tx }));
  assert.equal(paid.length, 6, stdout);
  for (const network of ['base', 'solana'] as const) {
    const lines = paid.filter((p) => p.network === network);
    assert.equal(lines.length, 3, `three payments on ${network}\n${stdout}`);
    for (const { price, tx } of lines) {
      assert.match(tx, TX[network]);
      assert.ok(parseUsdc(price) > 0n, `a price above zero: ${price}`);
    }
    for (const what of ['chat', 'image', 'speech']) assert.match(stdout, new RegExp(`^\\[${network}\\] ${what} `, 'm'));
  }
  assert.equal(new Set(paid.map((p) => p.tx)).size, 6, 'six distinct transactions');

  const funded = [...stdout.matchAll(/^funded (\S+) with test USDC on (\S+):/gm)].map(([, address, network]) => ({ address, network }));
  assert.deepEqual(funded.map((f) => f.network), ['base', 'solana']);
  for (const { address, network } of funded) assert.match(address ?? '', ADDRESS[network as 'base' | 'solana']);
  assert.match(stdout, /^demo complete: the image and speech files are in x402-demo\/ /m);
  // the links die with the demo's gateway: the files stay, at the paths printed
  const saved = [...stdout.matchAll(/^\[(\S+)\] (image|speech) \(\S+\): saved (\S+)$/gm)].map(([, network, what, path]) => ({ network, what, path: path! }));
  assert.deepEqual(saved.map((s) => `${s.network} ${s.what} ${s.path}`), [
    'base image x402-demo/base-image.png',
    'base speech x402-demo/base-speech.wav',
    'solana image x402-demo/solana-image.png',
    'solana speech x402-demo/solana-speech.wav',
  ]);
  // readable throughout: no raw JSON log line among the tour's output
  for (const printed of stdout.split('\n')) assert.doesNotMatch(printed, /^\s*\{"level"/, `a raw log line: ${printed}`);
  for (const { path, what } of saved) {
    const head = readFileSync(join(cwd, path)).subarray(0, 4);
    assert.equal(what === 'image' ? head.subarray(1, 4).toString() : head.toString(), what === 'image' ? 'PNG' : 'RIFF');
  }
});
