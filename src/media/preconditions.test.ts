// If-None-Match (weak comparison, lists, `*`) and If-Range (strong comparison) against a strong ETag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ifNoneMatchHits, ifRangeHolds, opaqueTags } from './preconditions.ts';

const etag = '"0123abcd"';

test('entity-tag lists: every tag in order, W/ dropped, empty elements and whitespace skipped', () => {
  assert.deepEqual(opaqueTags('"a"'), ['"a"']);
  assert.deepEqual(opaqueTags(' "a" ,W/"b",\t"c" '), ['"a"', '"b"', '"c"']);
  assert.deepEqual(opaqueTags(', ,"a",,"b",'), ['"a"', '"b"']);
  assert.deepEqual(opaqueTags('"a,b", "c"'), ['"a,b"', '"c"'], 'a comma inside the quotes is part of the tag');
  assert.deepEqual(opaqueTags('""'), ['""']);
  assert.deepEqual(opaqueTags('"a", junk, "b"'), ['"a"'], 'parsing stops at a malformed element');
  assert.deepEqual(opaqueTags('"a" "b"'), [], 'two tags without a comma are malformed');
  for (const malformed of ['a', 'w/"a"', 'W/ "a"', '"a', '"a"b', '"a\\"b"', '*, "a"']) {
    assert.deepEqual(opaqueTags(malformed), [], malformed);
  }
});

test('If-None-Match: weak comparison over the list, and * matches any current representation', () => {
  for (const hit of [etag, `W/${etag}`, `"abc", ${etag}`, `"abc",W/${etag}, "def"`, '*', ' * ', `  ${etag}  `]) {
    assert.equal(ifNoneMatchHits(hit, etag), true, hit);
  }
  for (const miss of [undefined, '', '"abc"', 'W/"abc", "def"', '0123abcd', `"0123ABCD"`, `"abc" ${etag}`, '**', '*, "abc"']) {
    assert.equal(ifNoneMatchHits(miss, etag), false, String(miss));
  }
});

test('If-Range: the Range holds only without one or with exactly the strong ETag', () => {
  assert.equal(ifRangeHolds(undefined, etag), true);
  assert.equal(ifRangeHolds(etag, etag), true);
  assert.equal(ifRangeHolds(` ${etag} `, etag), true);
  for (const other of ['', `W/${etag}`, '"abc"', `${etag}, "abc"`, 'Wed, 21 Oct 2015 07:28:00 GMT', '*']) {
    assert.equal(ifRangeHolds(other, etag), false, other);
  }
});
