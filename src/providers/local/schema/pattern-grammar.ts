// A JSON Schema `pattern` as grammar: a regular expression without backreferences or lookarounds is a regular
// language, which GBNF can state directly, so the model writes a string the pattern matches (a full match, so
// also a match anywhere, which is what `pattern` asks). The translation is one walk of the parsed pattern: its
// time is linear in the pattern, whatever the pattern; nothing is ever matched against a text here.
// Written as JSON string content: `"` and `\` escaped, control characters as \u escapes; a class is narrowed to its
// printable ASCII members when it has any (fewer bytes per character; any member is a match).
// Unbounded repetitions (`+`, `*`, `{n,}`) are bounded to `extra` more than their minimum.
import type { AST } from '@eslint-community/regexpp';
import { parsePattern } from './linear-regexp.ts';
import {
  charClass,
  choice,
  complementRanges,
  intersectRanges,
  JSON_TEXT_ASCII,
  JSON_TEXT_OTHER,
  literal,
  normalizeRanges,
  repeat,
  sequence,
  type Piece,
  type Ranges,
} from './gbnf.ts';

/** a pattern's grammar, with the fewest and most characters (code points) its strings have */
export interface PatternPiece extends Piece {
  minChars: number;
  maxChars: number;
}

class Untranslatable extends Error {}

/** expanded copies past which llama.cpp's grammar (which unrolls `{m,n}`) would grow too large */
const MAX_UNROLLED = 4_096;

/**
 * The grammar of the string content (without its quotes) for `pattern`, or undefined when the pattern uses what
 * a grammar cannot state (a backreference, a lookaround, a word boundary, an anchor inside the pattern, a
 * Unicode property other than a few common ones). Throws SyntaxError for a pattern that is not one.
 */
export function patternGrammar(pattern: string, extra: number): PatternPiece | undefined {
  const key = `${extra}:${pattern}`;
  if (translated.has(key)) return translated.get(key) ?? undefined;
  const ast = parsePattern(pattern);
  let piece: PatternPiece | null = null;
  try {
    piece = alternatives(ast.alternatives, { extra, unrolled: { count: 0 }, topLevel: true });
  } catch (error) {
    if (!(error instanceof Untranslatable)) throw error;
  }
  if (translated.size >= KEPT) translated.delete(translated.keys().next().value!);
  translated.set(key, piece);
  return piece ?? undefined;
}

const translated = new Map<string, PatternPiece | null>();
const KEPT = 500;

interface Walk {
  extra: number;
  unrolled: { count: number };
  topLevel: boolean;
}

function alternatives(list: AST.Alternative[], walk: Walk): PatternPiece {
  const pieces = list.map((alternative) => sequenceOf(alternative.elements, walk));
  return { ...choice(pieces), minChars: Math.min(...pieces.map((p) => p.minChars)), maxChars: Math.max(...pieces.map((p) => p.maxChars)) };
}

function sequenceOf(elements: AST.Element[], walk: Walk): PatternPiece {
  const pieces: PatternPiece[] = [];
  elements.forEach((element, index) => {
    if (element.type === 'Assertion') {
      // ^ first and $ last in a top-level alternative only say the match is the whole string: it is here anyway
      const edge = (element.kind === 'start' && index === 0) || (element.kind === 'end' && index === elements.length - 1);
      if (!walk.topLevel || !edge) throw new Untranslatable();
      return;
    }
    pieces.push(elementOf(element, { ...walk, topLevel: false }));
  });
  return { ...sequence(pieces), minChars: pieces.reduce((s, p) => s + p.minChars, 0), maxChars: pieces.reduce((s, p) => s + p.maxChars, 0) };
}

function elementOf(element: Exclude<AST.Element, AST.Assertion>, walk: Walk): PatternPiece {
  switch (element.type) {
    case 'Character':
      return character(element.value);
    case 'CharacterClass':
      if (element.unicodeSets) throw new Untranslatable();
      return oneOf(classRanges(element.elements, element.negate));
    case 'CharacterSet':
      return oneOf(setRanges(element));
    case 'Group':
      if (element.modifiers) throw new Untranslatable();
      return alternatives(element.alternatives, walk);
    case 'CapturingGroup':
      return alternatives(element.alternatives, walk);
    case 'Quantifier': {
      const inner = elementOf(element.element as Exclude<AST.Element, AST.Assertion>, walk);
      const max = element.max === Infinity ? element.min + walk.extra : element.max;
      walk.unrolled.count += max;
      if (walk.unrolled.count > MAX_UNROLLED) throw new Untranslatable();
      return { ...repeat(inner, element.min, max), minChars: inner.minChars * element.min, maxChars: inner.maxChars * max };
    }
    default:
      // backreferences, lookaround assertions, \q{} and expression classes
      throw new Untranslatable();
  }
}

/** one code point as JSON string content */
function character(code: number): PatternPiece {
  const text = String.fromCodePoint(code);
  const json = JSON.stringify(text).slice(1, -1);
  if (code >= 0xd800 && code <= 0xdfff) throw new Untranslatable();
  return { ...literal(json), minChars: 1, maxChars: 1 };
}

/** one code point of `ranges`, its printable ASCII members first, then other unescaped ones, else an escaped one */
function oneOf(ranges: Ranges): PatternPiece {
  for (const allowed of [JSON_TEXT_ASCII, JSON_TEXT_OTHER]) {
    const members = intersectRanges(ranges, allowed);
    if (members.length > 0) return { ...charClass(members), minChars: 1, maxChars: 1 };
  }
  if (ranges.length === 0) throw new Untranslatable(); // an empty class matches nothing
  return character(ranges[0]![0]);
}

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: Ranges = normalizeRanges([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
/** the Unicode properties written here, narrowed to their ASCII members (a grammar of all letters is no use) */
const PROPERTIES: Record<string, Ranges> = {
  L: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Letter: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Alphabetic: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Lu: [[0x41, 0x5a]],
  Uppercase_Letter: [[0x41, 0x5a]],
  Ll: [[0x61, 0x7a]],
  Lowercase_Letter: [[0x61, 0x7a]],
  N: DIGIT,
  Nd: DIGIT,
  Number: DIGIT,
  ASCII: [[0x00, 0x7f]],
};

function setRanges(set: AST.CharacterSet): Ranges {
  let ranges: Ranges;
  if (set.kind === 'any') return complementRanges(LINE_TERMINATORS);
  if (set.kind === 'property') {
    const known = set.value === null ? PROPERTIES[set.key] : undefined;
    if (!known || set.negate) throw new Untranslatable();
    return known;
  }
  ranges = set.kind === 'digit' ? DIGIT : set.kind === 'word' ? WORD : SPACE;
  return set.negate ? complementRanges(ranges) : ranges;
}

function classRanges(elements: AST.CharacterClassElement[], negate: boolean): Ranges {
  const ranges: Array<readonly [number, number]> = [];
  for (const element of elements) {
    if (element.type === 'Character') ranges.push([element.value, element.value]);
    else if (element.type === 'CharacterClassRange') ranges.push([element.min.value, element.max.value]);
    else if (element.type === 'CharacterSet') ranges.push(...setRanges(element));
    else throw new Untranslatable();
  }
  const union = normalizeRanges(ranges);
  return negate ? complementRanges(union) : union;
}
