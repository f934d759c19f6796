import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, requestHash } from './canonical-json.ts';

test('the same body in any key order serialises the same, undefined members left out', () => {
  assert.equal(canonicalJson({ b: 1, a: [{ d: 'x', c: null }], e: undefined }), '{"a":[{"c":null,"d":"x"}],"b":1}');
  assert.equal(canonicalJson({ a: [{ c: null, d: 'x' }], b: 1 }), canonicalJson({ b: 1, a: [{ d: 'x', c: null }] }));
});

test('a request hash is sha256 of "<route>\\n<canonical body>" in hex: ledgers keep it, so it never changes', () => {
  const body = { prompt: 'héllo ✓ 𝄞', n: 2, z: [1, { b: 'x', a: null }] };
  assert.equal(requestHash('/api/v1/ai/chat', body), 'faa9932052a47035dbbe013596280838f8b06277231e75b6800609a94e02d464');
  assert.equal(requestHash('/api/v1/ai/chat', { z: [1, { a: null, b: 'x' }], n: 2, prompt: 'héllo ✓ 𝄞' }), requestHash('/api/v1/ai/chat', body));
  assert.notEqual(requestHash('/api/v1/ai/images', body), requestHash('/api/v1/ai/chat', body));
});
