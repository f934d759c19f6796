import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { crc32, deflateSync } from 'node:zlib';
import { inspectImage, ownPngFacts } from './inspect-image.ts';
import { PreviewImageModel } from '../providers/local/preview-image-model.ts';

const solid = (format: 'png' | 'jpeg' | 'webp' | 'gif' | 'tiff', width = 64, height = 32) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } }).toFormat(format).toBuffer();

test('a decodable image gives the type its bytes are and its size', async () => {
  for (const [format, mediaType] of [['png', 'image/png'], ['jpeg', 'image/jpeg'], ['webp', 'image/webp'], ['gif', 'image/gif']] as const) {
    assert.deepEqual(await inspectImage(await solid(format), '64x32'), { mediaType, width: 64, height: 32 }, format);
  }
});

test('anything else is not an image: text, nothing, a file cut short, a format we do not serve', async () => {
  const png = await solid('png', 256, 256);
  for (const [what, bytes] of [
    ['HTML', Buffer.from('<html>error page</html>')],
    ['empty', Buffer.alloc(0)],
    ['truncated PNG', png.subarray(0, Math.floor(png.length / 2))],
    ['TIFF', await solid('tiff')],
  ] as const) {
    assert.equal(await inspectImage(bytes, '256x256'), undefined, what);
  }
});

test('an image of another size than paid for is reported from its header, never decoded', async () => {
  // a PNG header claiming 16000x16000 (768 MB decoded) over a few bytes of data: only its header is read
  const chunk = (type: string, data: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const framing = Buffer.alloc(8);
    framing.writeUInt32BE(data.length, 0);
    framing.writeUInt32BE(crc32(typed) >>> 0, 4);
    return Buffer.concat([framing.subarray(0, 4), typed, framing.subarray(4)]);
  };
  const header = Buffer.from([0, 0, 0x3e, 0x80, 0, 0, 0x3e, 0x80, 8, 2, 0, 0, 0]);
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.alloc(64))), chunk('IEND', Buffer.alloc(0))]);
  assert.deepEqual(await inspectImage(png, '256x256'), { mediaType: 'image/png', width: 16_000, height: 16_000 });
  assert.equal(await inspectImage(png, '16000x16000'), undefined, 'at the paid size it is decoded, and found cut short');
});

test("our own engine's PNG is read from its header: the size it was drawn at, no decode", async () => {
  const { images } = await new PreviewImageModel().doGenerate({ prompt: 'a lighthouse', n: 1, size: '1024x768', providerOptions: {} } as never);
  const drawn = images[0] as Uint8Array;
  assert.deepEqual(ownPngFacts(drawn), { mediaType: 'image/png', width: 1024, height: 768 });
  assert.deepEqual(ownPngFacts(drawn), await inspectImage(drawn, '1024x768'), 'the header says what a full decode says');
});

test('a header read is for PNGs only: anything else is not ours', async () => {
  for (const [what, bytes] of [
    ['JPEG', await solid('jpeg')],
    ['HTML', Buffer.from('<html>error page</html>')],
    ['empty', Buffer.alloc(0)],
    ['a PNG signature alone', (await solid('png')).subarray(0, 12)],
  ] as const) {
    assert.equal(ownPngFacts(bytes), undefined, what);
  }
});
