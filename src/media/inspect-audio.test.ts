import { test } from 'node:test';
import assert from 'node:assert/strict';
import { synthesizeWav } from '../providers/local/espeak-wasm.ts';
import { encodeWav } from '../providers/local/audio-encoder.ts';
import { silentMp3, silentWav } from '../../test/support/openai-upstream.ts';
import { inspectAudio, oggPageCrc } from './inspect-audio.ts';
import { fixWavSizes } from './wav.ts';

const wav = fixWavSizes(await synthesizeWav({ text: 'The sea is large and mostly blue.', voice: 'en-us' }));

test('audio files are recognised by their bytes', async () => {
  assert.equal(inspectAudio(wav), 'wav');
  assert.equal(inspectAudio(silentWav(800)), 'wav');
  assert.equal(inspectAudio(await encodeWav(wav, 'mp3')), 'mp3');
  assert.equal(inspectAudio(silentMp3(3)), 'mp3');
  assert.equal(inspectAudio(await encodeWav(wav, 'ogg')), 'ogg-vorbis');
});

test('an MP3 may open with an ID3 tag', () => {
  const tag = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x14', 'latin1'), Buffer.alloc(20)]);
  assert.equal(inspectAudio(Buffer.concat([tag, silentMp3(2)])), 'mp3');
});

/** One Ogg page (RFC 3533) holding one packet, with its checksum. */
function oggPage(packet: Buffer, flags: number, sequence: number): Buffer {
  const page = Buffer.concat([Buffer.from([0x4f, 0x67, 0x67, 0x53, 0, flags]), Buffer.alloc(20), Buffer.from([1, packet.length]), packet]);
  page.writeUInt32LE(sequence, 18);
  page.writeUInt32LE(oggPageCrc(page), 22);
  return page;
}

test('other containers: Ogg Opus, FLAC, ADTS AAC', () => {
  const opusHead = Buffer.concat([Buffer.from('OpusHead', 'latin1'), Buffer.alloc(11)]);
  const opus = Buffer.concat([oggPage(opusHead, 2, 0), oggPage(Buffer.alloc(40, 1), 4, 1)]);
  assert.equal(inspectAudio(opus), 'ogg-opus');
  const corrupted = Buffer.from(opus);
  corrupted[30]! ^= 1;
  assert.equal(inspectAudio(corrupted), undefined, 'a page whose checksum fails');
  assert.equal(inspectAudio(Buffer.concat([Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'), Buffer.alloc(34)])), 'flac');
  const adts = Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x01, 0x7f, 0xfc, 0, 0, 0, 0]); // 11-byte frame
  assert.equal(inspectAudio(Buffer.concat([adts, adts])), 'aac');
});

test('a file cut short is not whole audio, whatever its first bytes promise', async () => {
  const mp3 = await encodeWav(wav, 'mp3');
  const ogg = await encodeWav(wav, 'ogg');
  const cut: [string, Uint8Array][] = [
    ['a WAV with half its declared samples', wav.subarray(0, 44 + Math.floor((wav.length - 44) / 2))],
    ['an MP3 whose last frame is cut', mp3.subarray(0, mp3.length - 100)],
    ['an MP3 cut in a frame header', Buffer.concat([silentMp3(3), Buffer.from([0xff, 0xfb])])],
    ['an Ogg file without its last pages', ogg.subarray(0, Math.floor(ogg.length / 2))],
  ];
  for (const [what, bytes] of cut) assert.equal(inspectAudio(bytes), undefined, what);
  // what a file may end with, or a streaming writer may leave open
  const tagged = Buffer.concat([silentMp3(3), Buffer.from('TAG'), Buffer.alloc(125)]);
  assert.equal(inspectAudio(tagged), 'mp3', 'an ID3v1 tag after the frames');
  const streamed = Buffer.from(silentWav(800));
  streamed.writeUInt32LE(0xffffffff, 40);
  assert.equal(inspectAudio(streamed), 'wav', 'a data length left open');
});

test('anything else is not audio: an error body, nothing, a frame sync in random bytes, a WAV without samples', () => {
  const notAudio: [string, Uint8Array][] = [
    ['JSON error', Buffer.from('{"error":{"message":"quota exceeded"}}')],
    ['empty', Buffer.alloc(0)],
    ['cut JSON', Buffer.from('{"id": "x", "choices": [ {"message": ')],
    ['a lone frame sync', Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.from('then anything at all, not a frame')])],
    ['an ID3 tag and nothing after', Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00and then text', 'latin1')],
    ['a WAV header with no samples', silentWav(0)],
    ['an MP3 frame cut short', silentMp3(1).subarray(0, 200)],
  ];
  for (const [what, bytes] of notAudio) assert.equal(inspectAudio(bytes), undefined, what);
});
