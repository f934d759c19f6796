// Writing GBNF, llama.cpp's grammar language: literals, character classes, sequences, choices, repetitions.
// Every piece carries the fewest and the most bytes of text it can match, so a grammar's longest answer is known
// before it is decoded (a token is at least one byte: an answer of at most N bytes ends within N tokens).

export interface Piece {
  /** a GBNF expression */
  g: string;
  minBytes: number;
  maxBytes: number;
}

/** Code point ranges, [low, high] inclusive, sorted and disjoint. */
export type Ranges = ReadonlyArray<readonly [number, number]>;

const hex = (code: number) =>
  code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;

/** a code point written inside a GBNF literal or class: letters and digits as they are, anything else escaped */
const escaped = (code: number) => (/[A-Za-z0-9 ]/.test(String.fromCodePoint(code)) ? String.fromCodePoint(code) : hex(code));

export const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Matches exactly `text`. */
export function literal(text: string): Piece {
  let g = '"';
  for (const char of text) g += escaped(char.codePointAt(0)!);
  const bytes = utf8Bytes(text);
  return { g: `${g}"`, minBytes: bytes, maxBytes: bytes };
}

/** Matches one code point of `ranges` (not empty). */
export function charClass(ranges: Ranges): Piece {
  const body = ranges.map(([low, high]) => (low === high ? escaped(low) : `${escaped(low)}-${escaped(high)}`)).join('');
  return { g: `[${body}]`, minBytes: utf8Bytes(String.fromCodePoint(ranges[0]![0])), maxBytes: utf8Bytes(String.fromCodePoint(ranges.at(-1)![1])) };
}

export function sequence(pieces: readonly Piece[]): Piece {
  if (pieces.length === 1) return pieces[0]!;
  return {
    g: pieces.length === 0 ? '""' : pieces.map((piece) => piece.g).join(' '),
    minBytes: pieces.reduce((sum, piece) => sum + piece.minBytes, 0),
    maxBytes: pieces.reduce((sum, piece) => sum + piece.maxBytes, 0),
  };
}

export function choice(pieces: readonly Piece[]): Piece {
  if (pieces.length === 1) return pieces[0]!;
  return {
    g: `(${pieces.map((piece) => piece.g).join(' | ')})`,
    minBytes: Math.min(...pieces.map((piece) => piece.minBytes)),
    maxBytes: Math.max(...pieces.map((piece) => piece.maxBytes)),
  };
}

/** `piece` from `min` to `max` times. */
export function repeat(piece: Piece, min: number, max: number): Piece {
  if (max === 0) return { g: '""', minBytes: 0, maxBytes: 0 };
  if (min === 1 && max === 1) return piece;
  const count = min === 0 && max === 1 ? '?' : min === max ? `{${min}}` : `{${min},${max}}`;
  return { g: `(${piece.g})${count}`, minBytes: piece.minBytes * min, maxBytes: piece.maxBytes * max };
}

export const optional = (piece: Piece): Piece => repeat(piece, 0, 1);

/** Ranges helpers: union (sort and merge), intersection, complement within the Unicode code points. */
export function normalizeRanges(ranges: Iterable<readonly [number, number]>): Array<[number, number]> {
  const sorted = [...ranges].map(([a, b]) => [a, b] as [number, number]).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [low, high] of sorted) {
    const last = out.at(-1);
    if (last && low <= last[1] + 1) last[1] = Math.max(last[1], high);
    else out.push([low, high]);
  }
  return out;
}

export function intersectRanges(a: Ranges, b: Ranges): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [lowA, highA] of a) {
    for (const [lowB, highB] of b) {
      const low = Math.max(lowA, lowB);
      const high = Math.min(highA, highB);
      if (low <= high) out.push([low, high]);
    }
  }
  return normalizeRanges(out);
}

export function complementRanges(ranges: Ranges): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [low, high] of normalizeRanges(ranges)) {
    if (low > next) out.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/**
 * What a JSON string may hold unescaped, in the order preferred: printable ASCII but `"` and `\` (one byte per
 * character), then the rest of Unicode but surrogates.
 */
export const JSON_TEXT_ASCII: Ranges = [
  [0x20, 0x21],
  [0x23, 0x5b],
  [0x5d, 0x7e],
];
export const JSON_TEXT_OTHER: Ranges = [
  [0x7f, 0xd7ff],
  [0xe000, 0x10ffff],
];
