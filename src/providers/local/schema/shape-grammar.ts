// The grammar the embedded engine decodes a JSON answer under (a tool call's arguments, a json_schema answer),
// written from a schema's shapes (schema-shape.ts) to fit a budget of bytes: every answer the grammar allows is
// valid for the shapes and at most `budget` bytes long, so it ends (and its JSON closes) before max_tokens does,
// a token being at least one byte. The JSON is compact (no whitespace).
// What the shapes allow is narrowed, never widened:
// - strings: printable ASCII without escapes, at most STRING_MAX characters (or the schema's maxLength; minLength
//   kept); a pattern is written as its own grammar (pattern-grammar.ts), or as a fixed example it matches;
//   formats date, time and date-time are decoded as such, email, uri, uuid and the like are a fixed example
// - numbers: whole numbers from 0 to 999, never a sign, a fraction or an exponent. Clients read many a `number` as an
//   unsigned count (Codex's duration_ms is a u64: 1.42 or -5 failed its tool call), and as a duration: the toy
//   model's 1839845 had Codex's sleep tool wait half an hour. Numbers with bounds (minimum, maximum, exclusive ones,
//   multipleOf) are a few values that satisfy them
// - objects: the required properties, then the optional ones while the budget lasts (the model may leave those
//   out), no others; arrays: at least minItems items, at most ARRAY_MAX (or maxItems) while the budget lasts
// - choices (anyOf, oneOf, enum): the branches that fit; references are followed while the budget lasts
// The budget is spread in order: each part gets its least, then the first parts take what is left.
// minimumBytes is the shortest answer's size: a schema whose shortest answer exceeds max_tokens is refused
// before the price (it could only fail after the work).
import { linearRegExp } from './linear-regexp.ts';
import { patternGrammar } from './pattern-grammar.ts';
import { charClass, choice, JSON_TEXT_ASCII, literal, optional, repeat, sequence, type Piece } from './gbnf.ts';
import type { Literal, NumberBounds, Shape, ShapedSchema } from './schema-shape.ts';

export const STRING_MAX = 24;
export const ARRAY_MAX = 3;
const ENUM_MAX = 64;
const NUMBER_SAMPLES = 5;
/** an unbounded number's digits at most: a count or a duration a client acts on stays small */
const INTEGER_DIGITS = 3;
/** pieces written before choices keep only their cheapest branch and optional parts are left out */
const ECONOMY_AFTER = 2_000;
/** passes over the references to settle their shortest sizes (a chain settles in one) */
const MIN_PASSES = 64;

/** what a string with a `pattern` may be when the pattern cannot be written as grammar: the first it matches */
const PATTERN_CANDIDATES = [
  '2026-01-01', '12:00:00', '2026-01-01T12:00:00Z', '2026-01-01T12:00:00.000Z', 'demo@example.com', 'https://example.com/',
  '00000000-0000-4000-8000-000000000000', 'example.com', '192.0.2.1', 'demo', 'Demo', 'DEMO', 'a', 'A', '0', '1', 'abc', 'ABC', '123',
  'demo-1', 'demo_1', 'a1', 'A1', 'aa', 'AA', '00', '+1', '-1', '1.0', 'P1D', 'true', 'x', 'X',
];

const FIXED_FORMATS: Record<string, string> = {
  email: 'demo@example.com',
  'idn-email': 'demo@example.com',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  'iri-reference': 'https://example.com/',
  url: 'https://example.com/',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  duration: 'P1D',
};

const DIGIT = charClass([[0x30, 0x39]]);
const g = (text: string, bytes: number): Piece => ({ g: text, minBytes: bytes, maxBytes: bytes });
const DATE = g('[0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | "1" [0-9] | "2" [0-8])', 10);
const TIME = g('([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] "Z"', 9);
const FORMATS: Record<string, Piece> = { date: DATE, time: TIME, 'date-time': sequence([DATE, literal('T'), TIME]) };
const QUOTE = literal('"');
const quoted = (piece: Piece) => sequence([QUOTE, piece, QUOTE]);

const jsonText = (value: Literal) => JSON.stringify(value);
type StringShape = Extract<Shape, { kind: 'string' }>;
const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

/** The grammar of answers fitting `shaped` within `budget` bytes, or undefined when even the shortest does not fit. */
export function schemaGrammar(shaped: ShapedSchema, budget: number): { gbnf: string; maxBytes: number } | undefined {
  const writer = new GrammarWriter(shaped);
  const piece = writer.fit(shaped.root, budget);
  return piece && { gbnf: `root ::= ${piece.g}`, maxBytes: piece.maxBytes };
}

/** The size in bytes of the shortest answer that fits `shaped` (Infinity: none can be written). */
export function minimumBytes(shaped: ShapedSchema): number {
  return new GrammarWriter(shaped).min(shaped.root);
}

class GrammarWriter {
  private readonly shaped: ShapedSchema;
  /** the shortest size of each reference target, settled over the references (cycles included) */
  private readonly targetMin = new Map<string, number>();
  private readonly memo = new WeakMap<Shape, number>();
  private readonly following = new Set<string>();
  private readonly strings = new WeakMap<StringShape, { fixed: Piece[]; plain: boolean }>();
  private written = 0;

  constructor(shaped: ShapedSchema) {
    this.shaped = shaped;
    for (const pointer of shaped.targets.keys()) this.targetMin.set(pointer, Infinity);
    for (let pass = 0; pass < MIN_PASSES; pass++) {
      let changed = false;
      for (const [pointer, shape] of shaped.targets) {
        const size = this.minOf(shape);
        if (size < this.targetMin.get(pointer)!) {
          this.targetMin.set(pointer, size);
          changed = true;
        }
      }
      if (!changed) break;
    }
  }

  /** the shortest size, memoized once the references are settled */
  min(shape: Shape): number {
    let size = this.memo.get(shape);
    if (size === undefined) {
      size = this.minOf(shape);
      this.memo.set(shape, size);
    }
    return size;
  }

  private minOf(shape: Shape): number {
    switch (shape.kind) {
      case 'any':
        return 1;
      case 'never':
        return Infinity;
      case 'null':
      case 'boolean':
        return 4;
      case 'literals':
        return shape.values.reduce<number>((least, value) => Math.min(least, bytesOf(jsonText(value))), Infinity);
      case 'string':
        return this.stringMin(shape);
      case 'number':
        return this.numberPiece(shape, Infinity)?.minBytes ?? Infinity;
      case 'object': {
        const entries = this.objectEntries(shape);
        if (!entries) return Infinity;
        return 2 + Math.max(0, entries.fixed.length - 1) + entries.fixed.reduce((sum, [key, value]) => sum + bytesOf(key) + 1 + this.minOf(value), 0);
      }
      case 'array': {
        const positions = arrayPositions(shape);
        if (!positions) return Infinity;
        const fixed = positions.slice(0, shape.minItems);
        return 2 + Math.max(0, fixed.length - 1) + fixed.reduce((sum, item) => sum + this.minOf(item), 0);
      }
      case 'union':
        return shape.options.reduce<number>((least, option) => Math.min(least, this.minOf(option)), Infinity);
      case 'ref':
        return this.targetMin.get(shape.pointer) ?? 1;
    }
  }

  /** A piece for `shape` whose longest text is at most `budget` bytes, or undefined. */
  fit(shape: Shape, budget: number): Piece | undefined {
    if (this.min(shape) > budget) return undefined;
    this.written += 1;
    switch (shape.kind) {
      case 'any':
        return this.anyPiece(budget);
      case 'never':
        return undefined;
      case 'null':
        return literal('null');
      case 'boolean':
        return choice([literal('true'), literal('false')].filter((piece) => piece.maxBytes <= budget));
      case 'literals': {
        const fitting = shape.values.map((value) => literal(jsonText(value))).filter((piece) => piece.maxBytes <= budget);
        return choice(fitting.slice(0, this.economy ? 1 : ENUM_MAX));
      }
      case 'string':
        return this.stringPiece(shape, budget);
      case 'number':
        return this.numberPiece(shape, budget);
      case 'object':
        return this.objectPiece(shape, budget);
      case 'array':
        return this.arrayPiece(shape, budget);
      case 'union': {
        if (this.economy) {
          const cheapest = shape.options.reduce((best, option) => (this.min(option) < this.min(best) ? option : best));
          return this.fit(cheapest, budget);
        }
        const pieces = shape.options.map((option) => this.fit(option, budget)).filter((piece): piece is Piece => piece !== undefined);
        return pieces.length === 0 ? undefined : choice(pieces);
      }
      case 'ref': {
        // a reference followed again with no byte spent since (anyOf [itself, ...]) would never end
        const key = `${shape.pointer}@${budget}`;
        const target = this.shaped.targets.get(shape.pointer);
        if (!target || this.following.has(key)) return undefined;
        this.following.add(key);
        try {
          return this.fit(target, budget);
        } finally {
          this.following.delete(key);
        }
      }
    }
  }

  private get economy(): boolean {
    return this.written > ECONOMY_AFTER;
  }

  private anyPiece(budget: number): Piece | undefined {
    const pieces = [this.numberPiece({ integer: true }, budget), literal('null'), literal('true'), literal('false')];
    const text = this.plainString(0, STRING_MAX, budget);
    return choice([...pieces, text].filter((piece): piece is Piece => piece !== undefined && piece.maxBytes <= budget));
  }

  private plainString(minLength: number, maxLength: number, budget: number): Piece | undefined {
    const longest = Math.min(maxLength, budget - 2);
    if (longest < minLength) return undefined;
    return quoted(repeat(charClass(JSON_TEXT_ASCII), minLength, longest));
  }

  private stringPiece(shape: StringShape, budget: number): Piece | undefined {
    const { fixed, plain } = this.stringChoices(shape);
    const piece = fixed.find((candidate) => candidate.maxBytes <= budget);
    if (piece || !plain) return piece;
    return this.plainString(shape.minLength, Math.max(shape.minLength, Math.min(shape.maxLength ?? STRING_MAX, STRING_MAX)), budget);
  }

  private stringMin(shape: StringShape): number {
    const { fixed, plain } = this.stringChoices(shape);
    return Math.min(plain ? 2 + shape.minLength : Infinity, ...fixed.map((piece) => piece.maxBytes));
  }

  /**
   * The ways to write a string, best first: a pattern's grammar (longer repetitions first) or a fixed example it
   * matches, a format's grammar or example; and whether a plain string is the way (none of those applies).
   */
  private stringChoices(shape: StringShape): { fixed: Piece[]; plain: boolean } {
    let choices = this.strings.get(shape);
    if (choices) return choices;
    const { minLength, maxLength, format, patterns } = shape;
    const fixed: Piece[] = [];
    const lengthFits = (text: string) => [...text].length >= minLength && [...text].length <= (maxLength ?? Infinity);
    if (patterns.length > 0) {
      if (patterns.length === 1) {
        for (const extra of [3, 1, 0]) {
          const piece = patternGrammar(patterns[0]!, extra);
          if (piece && piece.minChars >= minLength && piece.maxChars <= (maxLength ?? Infinity)) fixed.push(quoted(piece));
        }
      }
      const testers = patterns.map((pattern) => linearRegExp(pattern));
      const example = PATTERN_CANDIDATES.find((text) => lengthFits(text) && testers.every((tester) => tester?.test(text) ?? true));
      if (example !== undefined) fixed.push(literal(JSON.stringify(example)));
      // a pattern no grammar states and no example fits is left free: the final check tells
    } else if (format !== undefined && FORMATS[format]) {
      fixed.push(quoted(FORMATS[format]));
    } else if (format !== undefined && FIXED_FORMATS[format] && lengthFits(FIXED_FORMATS[format])) {
      fixed.push(literal(JSON.stringify(FIXED_FORMATS[format])));
    }
    choices = { fixed, plain: fixed.length === 0 };
    this.strings.set(shape, choices);
    return choices;
  }

  private numberPiece(shape: { integer: boolean } & NumberBounds, budget: number): Piece | undefined {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = shape;
    if ([minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf].some((bound) => bound !== undefined)) {
      const values = boundedNumbers(shape).map((value) => literal(String(value))).filter((piece) => piece.maxBytes <= budget);
      return values.length === 0 ? undefined : choice(values);
    }
    if (budget < 1) return undefined;
    // 0 or a number without leading zeros, of at most INTEGER_DIGITS digits
    const digits = Math.min(INTEGER_DIGITS, budget);
    return digits <= 1 ? DIGIT : choice([literal('0'), sequence([charClass([[0x31, 0x39]]), repeat(DIGIT, 0, digits - 1)])]);
  }

  /** The properties written always (key as JSON text, shape) and the optional ones, or undefined when none can be. */
  private objectEntries(shape: Extract<Shape, { kind: 'object' }>): { fixed: Array<[string, Shape]>; optional: Array<[string, Shape]> } | undefined {
    const fixed: Array<[string, Shape]> = [];
    const optionalEntries: Array<[string, Shape]> = [];
    for (const [name, value] of shape.properties) (shape.required.has(name) ? fixed : optionalEntries).push([JSON.stringify(name), value]);
    for (const name of shape.required) {
      if (shape.properties.has(name)) continue;
      if (shape.additional === false) return undefined;
      fixed.push([JSON.stringify(name), shape.additional]);
    }
    // minProperties: optional ones first, then made-up keys where other keys are allowed
    while (fixed.length < shape.minProperties && optionalEntries.length > 0) fixed.push(optionalEntries.shift()!);
    for (let i = 1; fixed.length < shape.minProperties; i++) {
      if (shape.additional === false) return undefined;
      const key = JSON.stringify(`key${i}`);
      if (!shape.properties.has(`key${i}`)) fixed.push([key, shape.additional]);
    }
    if (shape.maxProperties !== undefined && fixed.length > shape.maxProperties) return undefined;
    return { fixed, optional: optionalEntries };
  }

  private objectPiece(shape: Extract<Shape, { kind: 'object' }>, budget: number): Piece | undefined {
    const entries = this.objectEntries(shape)!;
    let slack = budget - this.min(shape);
    const member = (key: string, value: Piece) => sequence([literal(key), literal(':'), value]);
    const pieces: Piece[] = [];
    for (const [key, value] of entries.fixed) {
      const least = this.min(value);
      const piece = this.fit(value, least + slack);
      if (!piece) return undefined;
      slack -= piece.maxBytes - least;
      pieces.push(pieces.length === 0 ? member(key, piece) : sequence([literal(','), member(key, piece)]));
    }
    let count = entries.fixed.length;
    for (const [key, value] of entries.optional) {
      if (this.economy || count >= (shape.maxProperties ?? Infinity)) break;
      // with nothing written always, the first optional property that fits is written always (no leading comma)
      const overhead = bytesOf(key) + 1 + (pieces.length === 0 ? 0 : 1);
      if (overhead + this.min(value) > slack) continue;
      const piece = this.fit(value, slack - overhead);
      if (!piece) continue;
      slack -= overhead + piece.maxBytes;
      if (pieces.length === 0) pieces.push(member(key, piece));
      else pieces.push(optional(sequence([literal(','), member(key, piece)])));
      count += 1;
    }
    return sequence([literal('{'), ...pieces, literal('}')]);
  }

  private arrayPiece(shape: Extract<Shape, { kind: 'array' }>, budget: number): Piece | undefined {
    const positions = arrayPositions(shape)!;
    let slack = budget - this.min(shape);
    const items: Piece[] = [];
    for (const [index, item] of positions.entries()) {
      const least = this.min(item);
      const mandatory = index < shape.minItems;
      if (!mandatory) {
        if (this.economy || least + 1 > slack) break;
        const piece = this.fit(item, slack - 1);
        if (!piece) break;
        slack -= piece.maxBytes + 1;
        items.push(piece);
        continue;
      }
      const piece = this.fit(item, least + slack);
      if (!piece) return undefined;
      slack -= piece.maxBytes - least;
      items.push(piece);
    }
    // the mandatory items in a row, then each optional one nested in the one before: a, b (, c (, d)?)?
    let tail: Piece | undefined;
    for (let i = items.length - 1; i >= shape.minItems; i--) {
      const item = i === 0 ? items[i]! : sequence([literal(','), items[i]!]);
      tail = optional(tail ? sequence([item, tail]) : item);
    }
    const mandatory = items.slice(0, shape.minItems).flatMap((item, i) => (i === 0 ? [item] : [literal(','), item]));
    return sequence([literal('['), ...mandatory, ...(tail ? [tail] : []), literal(']')]);
  }
}

/** The shape of each item an array may hold, up to the most written (undefined: minItems cannot be met). */
function arrayPositions(shape: Extract<Shape, { kind: 'array' }>): Shape[] | undefined {
  // unique items: one item unless more are needed, then the first distinct literals when the items are literals
  const distinct = shape.unique && shape.minItems > 1 && shape.items !== false && shape.items.kind === 'literals' ? shape.items.values : undefined;
  const cap = shape.unique ? Math.max(1, shape.minItems) : ARRAY_MAX;
  let most = Math.max(shape.minItems, Math.min(shape.maxItems ?? cap, cap));
  if (shape.items === false) most = Math.min(most, shape.prefix.length);
  if (most < shape.minItems) return undefined;
  return Array.from({ length: most }, (_, i): Shape => {
    if (distinct && i >= shape.prefix.length) return { kind: 'literals', values: [distinct[i % distinct.length]!] };
    return shape.prefix[i] ?? (shape.items === false ? { kind: 'never' } : shape.items);
  });
}

/** A few numbers that satisfy every bound, spread across the allowed range. */
function boundedNumbers(shape: { integer: boolean } & NumberBounds): number[] {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = shape;
  const step = multipleOf !== undefined && multipleOf > 0 ? multipleOf : 1;
  const fits = (value: number) =>
    Number.isFinite(value) &&
    (minimum === undefined || value >= minimum) &&
    (maximum === undefined || value <= maximum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) &&
    (exclusiveMaximum === undefined || value < exclusiveMaximum) &&
    (!shape.integer || Number.isInteger(value)) &&
    (multipleOf === undefined || Number.isInteger(Number((value / multipleOf).toFixed(9))));
  const low = Math.max(minimum ?? -Infinity, exclusiveMinimum ?? -Infinity);
  const high = Math.min(maximum ?? Infinity, exclusiveMaximum ?? Infinity);
  // candidates: multiples of the step (of 1 for integers) from the low end, or the high end, or zero; then, for a
  // bounded range, points spread inside it
  const unit = shape.integer && !Number.isInteger(step) ? 1 : step;
  const start = Number.isFinite(low) ? Math.ceil(low / unit) * unit : Number.isFinite(high) ? Math.floor(high / unit) * unit - unit * (NUMBER_SAMPLES - 1) : 0;
  const span = Number.isFinite(low) && Number.isFinite(high) ? Math.max(1, Math.floor((high - start) / unit / (NUMBER_SAMPLES - 1))) : 1;
  const candidates: number[] = [];
  for (let i = 0; i < NUMBER_SAMPLES * 4; i++) candidates.push(start + i * span * unit);
  if (Number.isFinite(low) && Number.isFinite(high)) {
    for (let k = 1; k <= NUMBER_SAMPLES; k++) candidates.push(low + ((high - low) * k) / (NUMBER_SAMPLES + 1));
  }
  const values: number[] = [];
  for (const candidate of candidates) {
    const value = shape.integer ? Math.round(candidate) : Number(candidate.toFixed(6));
    if (values.length < NUMBER_SAMPLES && fits(value) && !values.includes(value) && !String(value).includes('e')) values.push(value);
  }
  return values;
}
