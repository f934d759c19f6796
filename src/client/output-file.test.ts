import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mediaFileName, prepareOutputFile, saveWithoutOverwriting, speechFormat } from './output-file.ts';
import { UsageError } from './command-line.ts';

test('speechFormat: --format wins and must fit the extension; else the extension names the format', () => {
  assert.equal(speechFormat('mp3', 'a.mp3'), 'mp3');
  assert.equal(speechFormat('opus', 'a.ogg'), 'opus');
  assert.equal(speechFormat('wav', undefined), 'wav');
  assert.throws(() => speechFormat('mp3', 'a.wav'), UsageError);
  assert.equal(speechFormat(undefined, 'a.WAV'), 'wav');
  assert.equal(speechFormat(undefined, 'a.ogg'), 'ogg', 'Ogg means Vorbis unless --format opus says otherwise');
  assert.equal(speechFormat(undefined, 'a.opus'), 'opus');
  assert.equal(speechFormat(undefined, undefined), undefined);
  assert.equal(speechFormat(undefined, 'no-extension'), undefined);
  assert.throws(() => speechFormat(undefined, 'a.txt'), /\.txt is not an audio file extension/);
});

test('an existing file is refused before paying; after paying a taken name gets a numbered sibling', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'x402-out-'));
  try {
    const path = join(dir, 'speech.wav');
    writeFileSync(path, 'earlier');
    await assert.rejects(prepareOutputFile(path), UsageError);
    await prepareOutputFile(join(dir, 'new', 'folder', 'x.wav')); // makes the folder
    assert.equal(await saveWithoutOverwriting(path, new Uint8Array([1])), join(dir, 'speech-1.wav'));
    assert.equal(await saveWithoutOverwriting(path, new Uint8Array([2])), join(dir, 'speech-2.wav'));
    assert.equal(readFileSync(path, 'utf8'), 'earlier');
    assert.deepEqual([...readFileSync(join(dir, 'speech-2.wav'))], [2]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a media URL saves under its id, never under a name starting with "-" (it would read as an option)', () => {
  assert.equal(mediaFileName('http://127.0.0.1:4021/media/Ab3_x.png'), 'Ab3_x.png');
  assert.equal(mediaFileName('http://127.0.0.1:4021/media/-Ab3.png'), '_Ab3.png');
  assert.equal(mediaFileName('http://127.0.0.1:4021/media/--x.wav'), '__x.wav');
  assert.equal(mediaFileName('http://127.0.0.1:4021/media/a-b.wav'), 'a-b.wav');
  // the gateway chooses the URL: no name that climbs out of the folder chosen, and no throw after paying
  for (const url of ['http://host/', 'http://host/media/%2e%2e', 'http://host/a/..', 'data:,/..', 'http://host/a%2F..%2F..%2Fx', '/relative', 'not a url', 'http://host/%E0%A4%A']) {
    const name = mediaFileName(url);
    assert.ok(!['', '.', '..'].includes(name) && !/[/\\]/.test(name), `${url}: ${name}`);
  }
});
