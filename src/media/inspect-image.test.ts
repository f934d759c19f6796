import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { inspectImage } from './inspect-image.ts';

const solid = (format: 'png' | 'jpeg' | 'webp' | 'gif' | 'tiff', width = 64, height = 32) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } }).toFormat(format).toBuffer();

test('a decodable image gives the type its bytes are and its size', async () => {
  for (const [format, mediaType] of [['png', 'image/png'], ['jpeg', 'image/jpeg'], ['webp', 'image/webp'], ['gif', 'image/gif']] as const) {
    assert.deepEqual(await inspectImage(await solid(format)), { mediaType, width: 64, height: 32 }, format);
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
    assert.equal(await inspectImage(bytes), undefined, what);
  }
});
