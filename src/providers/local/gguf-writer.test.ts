import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toFloat16Bits, writeGguf, GGUF_ALIGNMENT } from './gguf-writer.ts';

test('float16 conversion', () => {
  assert.equal(toFloat16Bits(0), 0x0000);
  assert.equal(toFloat16Bits(1), 0x3c00);
  assert.equal(toFloat16Bits(-2), 0xc000);
  assert.equal(toFloat16Bits(0.5), 0x3800);
  assert.equal(toFloat16Bits(65504), 0x7bff);
  assert.equal(toFloat16Bits(1e6), 0x7c00);
  assert.equal(toFloat16Bits(-Infinity), 0xfc00);
  assert.equal(toFloat16Bits(2 ** -24), 0x0001); // smallest subnormal
  assert.equal(toFloat16Bits(-30), 0xcf80);
  assert.equal(toFloat16Bits(1 + 2 ** -11), 0x3c00); // halfway rounds to even
});

test('header, metadata and aligned tensor data', () => {
  const bytes = writeGguf(new Map([['general.architecture', { type: 'string', value: 'llama' }]]), [
    { name: 't', dims: [3], type: 'F32', data: Float32Array.of(1, 2, 3) },
  ]);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'GGUF');
  assert.equal(view.getUint32(4, true), 3); // version
  assert.equal(view.getBigUint64(8, true), 1n); // tensors
  assert.equal(view.getBigUint64(16, true), 1n); // metadata entries
  assert.equal(bytes.length % GGUF_ALIGNMENT, 0);
  // the data section is the last aligned block: 3 floats padded to 32 bytes
  const data = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - GGUF_ALIGNMENT, 12);
  assert.deepEqual([data.getFloat32(0, true), data.getFloat32(4, true), data.getFloat32(8, true)], [1, 2, 3]);
  assert.throws(() => writeGguf(new Map(), [{ name: 'bad', dims: [2, 2], type: 'F16', data: new Float32Array(3) }]));
});
