// An x402 header (base64 of a JSON document) that is the same on every response but for a few fixed-width
// string values, e.g. the sign-in-with-x challenge's nonce and timestamps in PAYMENT-REQUIRED. Base64 turns
// every 3 bytes into 4 characters independently of the rest, so the bytes before the first of those values
// and after the last, cut at multiples of 3, are encoded once; each response encodes only the short span
// that holds the values (a few hundred bytes of a several-KB header). Same bytes as encoding it all.
import { encodeHeader } from './encoding.ts';

/** The header with these values, in the order of the placeholders. */
export type HeaderFiller = (values: readonly string[]) => string;

/** what a value may hold to be written over its placeholder as is: printable ASCII that JSON does not escape */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * `documentWith(values)` is the header's JSON document holding `values`; `placeholders` are values that each
 * occur exactly once in `documentWith(placeholders)`'s JSON text, as a whole string. A value of another length
 * than its placeholder, or one JSON would escape, gets the whole document encoded (same result, slower); so
 * does every call when a placeholder is missing or occurs twice.
 */
export function splicedHeader(documentWith: (values: readonly string[]) => unknown, placeholders: readonly string[]): HeaderFiller {
  const whole: HeaderFiller = (values) => encodeHeader(documentWith(values));
  const json = Buffer.from(JSON.stringify(documentWith(placeholders)), 'utf8');
  const offsets: number[] = [];
  for (const placeholder of placeholders) {
    if (!VERBATIM.test(placeholder)) return whole;
    const quoted = Buffer.from(`"${placeholder}"`, 'latin1');
    const at = json.indexOf(quoted);
    if (at === -1 || json.indexOf(quoted, at + 1) !== -1) return whole;
    offsets.push(at + 1);
  }
  if (offsets.length === 0) return () => json.toString('base64');

  const first = Math.min(...offsets);
  const last = Math.max(...offsets.map((at, i) => at + placeholders[i]!.length));
  const start = first - (first % 3);
  const end = Math.min(json.length, last + ((3 - (last % 3)) % 3));
  const head = json.toString('base64', 0, start);
  const tail = json.toString('base64', end);
  // the span is filled in place and encoded at once, so one buffer serves every call
  const span = Buffer.from(json.subarray(start, end));
  return (values) => {
    for (let i = 0; i < placeholders.length; i++) {
      const value = values[i];
      if (value === undefined || value.length !== placeholders[i]!.length || !VERBATIM.test(value)) return whole(values);
    }
    for (let i = 0; i < placeholders.length; i++) span.write(values[i]!, offsets[i]! - start, 'latin1');
    return head + span.toString('base64') + tail;
  };
}
