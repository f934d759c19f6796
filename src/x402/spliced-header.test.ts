import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeHeader } from './encoding.ts';
import { splicedHeader } from './spliced-header.ts';

const PLACEHOLDERS = ['<nonce----------------------->', '<issued-at------------->', '<expires--------------->'];
const VALUES = ['0123456789abcdef0123456789abcdef'.slice(0, 30), '2026-11-24T03:04:07.622Z', '2026-11-24T03:09:07.622Z'];

/** A document like PAYMENT-REQUIRED: text before, the fresh values in the middle, text after. */
const documentWith = (before: string, after: string) => (values: readonly string[]) => ({
  x402Version: 2,
  error: before,
  extensions: { challenge: { info: { nonce: values[0], issuedAt: values[1], resources: ['https://example.com/x'], expirationTime: values[2] } }, after },
});

test('same bytes as encoding the whole document, whatever the fields\' alignment to base64\'s 3-byte blocks', () => {
  // every alignment of the values' start and end, and multi-byte characters before and after them
  for (const before of ['', 'a', 'ab', 'abc', 'é', 'éé', '雪', '雪a', 'x'.repeat(5000)]) {
    for (const after of ['', 'z', 'zz', 'ü', '😀']) {
      const fill = splicedHeader(documentWith(before, after), PLACEHOLDERS);
      assert.equal(fill(VALUES), encodeHeader(documentWith(before, after)(VALUES)), JSON.stringify({ before, after }));
      const other = ['f'.repeat(30), '1999-01-01T00:00:00.000Z', '2100-12-31T23:59:59.999Z'];
      assert.equal(fill(other), encodeHeader(documentWith(before, after)(other)), 'the span is filled afresh on each call');
    }
  }
});

test('a value placed last in the document (no bytes after the span)', () => {
  const documentWith = (values: readonly string[]) => [values[0]];
  for (const value of ['a', 'ab', 'abc', 'abcd']) {
    const fill = splicedHeader(documentWith, ['#'.repeat(value.length)]);
    assert.equal(fill([value]), encodeHeader([value]));
  }
});

test('values it cannot write in place are still encoded right: another width, a quote, a backslash, non-ASCII', () => {
  const fill = splicedHeader(documentWith('a', 'b'), PLACEHOLDERS);
  for (const odd of [
    ['short', VALUES[1]!, VALUES[2]!],
    [VALUES[0]!, '2026-11-24T03:04:07.622"', VALUES[2]!],
    [VALUES[0]!, VALUES[1]!, '2026-11-24T03:09:07.62\\Z'],
    ['é'.repeat(30), VALUES[1]!, VALUES[2]!],
  ]) {
    assert.equal(fill(odd), encodeHeader(documentWith('a', 'b')(odd)));
  }
  assert.equal(fill(VALUES), encodeHeader(documentWith('a', 'b')(VALUES)), 'and the next ordinary call is still right');
});

test('a placeholder that also occurs elsewhere in the document: the whole document is encoded, same bytes', () => {
  const fill = splicedHeader(documentWith(PLACEHOLDERS[0]!, ''), PLACEHOLDERS);
  assert.equal(fill(VALUES), encodeHeader(documentWith(PLACEHOLDERS[0]!, '')(VALUES)));
  const missing = splicedHeader(() => ({ nothing: true }), PLACEHOLDERS);
  assert.equal(missing(VALUES), encodeHeader({ nothing: true }));
});
