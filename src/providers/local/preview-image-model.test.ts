import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateImage } from 'ai';
import sharp from 'sharp';
import { PreviewImageModel } from './preview-image-model.ts';
import { PREVIEW_IMAGE_ENGINE } from '../../config/engines.ts';

const model = new PreviewImageModel();
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Width and height from the PNG's IHDR chunk, which must come first. */
function ihdrSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  assert.equal(new TextDecoder().decode(png.subarray(12, 16)), 'IHDR');
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

for (const size of ['512x512', '1024x768'] as const) {
  test(`draws n=2 different PNG images of ${size}`, async () => {
    const { images } = await generateImage({ model, prompt: 'a lighthouse in a storm', n: 2, size });
    assert.equal(images.length, 2);
    const [width, height] = size.split('x').map(Number);
    for (const image of images) {
      assert.equal(image.mediaType, 'image/png');
      assert.deepEqual([...image.uint8Array.subarray(0, 8)], PNG_SIGNATURE);
      assert.deepEqual(ihdrSize(image.uint8Array), { width, height });
      const meta = await sharp(image.uint8Array).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['png', width, height]);
    }
    assert.notDeepEqual(images[0]!.uint8Array, images[1]!.uint8Array);
  });
}

test('the same request gives identical bytes; another prompt, size or seed gives another picture', async () => {
  const draw = async (prompt: string, size: `${number}x${number}` = '256x256', seed?: number) =>
    (await generateImage({ model, prompt, size, seed })).image.uint8Array;
  const first = await draw('a red fox in the snow');
  assert.deepEqual(await draw('a red fox in the snow'), first);
  assert.deepEqual(await new PreviewImageModel().doGenerate(callOptions('a red fox in the snow')).then((r) => r.images[0]), first);
  assert.notDeepEqual(await draw('a red fox in the sun'), first);
  assert.notDeepEqual(await draw('a red fox in the snow', '256x255'), first);
  assert.notDeepEqual(await draw('a red fox in the snow', '256x256', 7), first);
});

test('a seed given in the request options (providerOptions) acts as the call seed', async () => {
  const draw = async (providerOptions?: Record<string, Record<string, number>>) =>
    (await generateImage({ model, prompt: 'a red fox', size: '256x256', providerOptions })).image.uint8Array;
  const seeded = await draw({ [PREVIEW_IMAGE_ENGINE.provider]: { seed: 7 } });
  assert.deepEqual(seeded, (await generateImage({ model, prompt: 'a red fox', size: '256x256', seed: 7 })).image.uint8Array);
  assert.deepEqual(await draw({ [PREVIEW_IMAGE_ENGINE.provider]: { seed: 7 } }), seeded);
  assert.notDeepEqual(await draw({ [PREVIEW_IMAGE_ENGINE.provider]: { seed: 8 } }), seeded);
  assert.notDeepEqual(await draw(), seeded);
});

test('image i of a request does not depend on how many were asked for', async () => {
  const one = await generateImage({ model, prompt: 'waves', n: 1, size: '256x256' });
  const three = await generateImage({ model, prompt: 'waves', n: 3, size: '256x256' });
  assert.deepEqual(three.images[0]!.uint8Array, one.image.uint8Array);
});

test('an aspect ratio without a size fits a 1024 px box', async () => {
  const { image } = await generateImage({ model, prompt: 'wide', aspectRatio: '16:9' });
  assert.deepEqual(ihdrSize(image.uint8Array), { width: 1024, height: 576 });
});

test('sizes out of bounds and image editing are refused', async () => {
  await assert.rejects(generateImage({ model, prompt: 'x', size: '4096x4096' }), /sides from 16 to 2048/);
  await assert.rejects(
    generateImage({ model, prompt: { images: [new Uint8Array([1, 2, 3])], text: 'edit this' } }),
    /only draws new images/,
  );
});

test('the catalog description lists sizes the model draws', () => {
  assert.ok(PREVIEW_IMAGE_ENGINE.sizes.includes(PREVIEW_IMAGE_ENGINE.defaultSize));
  assert.ok(model.maxImagesPerCall >= PREVIEW_IMAGE_ENGINE.maxN);
  assert.match(PREVIEW_IMAGE_ENGINE.label, /not an AI model/);
});

function callOptions(prompt: string) {
  return {
    prompt,
    n: 1,
    size: '256x256' as const,
    aspectRatio: undefined,
    seed: undefined,
    files: undefined,
    mask: undefined,
    providerOptions: {},
  };
}
